//go:build linux

package attacktest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// SECURITY.md names the test behind every rule; each named test must exist,
// so that the page cannot drift from the code silently.
func TestSecurityMDNamesRealTests(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, "SECURITY.md"))
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err = filepath.WalkDir(filepath.Join(root, "internal"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(b, -1) {
			defined[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`(?:[a-z]+\\.)?(Test\\w+)`").FindAllSubmatch(page, -1)
	if len(named) < 20 {
		t.Fatalf("SECURITY.md names only %d tests", len(named))
	}
	for _, m := range named {
		if !defined[string(m[1])] {
			t.Errorf("SECURITY.md names %s, which no test file defines", m[1])
		}
	}
}
