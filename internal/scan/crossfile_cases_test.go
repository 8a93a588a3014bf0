package scan

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// crossFileCases scans each skill directory under <root>/<cat>/
// as one unit (ScanFiles) and counts the blocked ones; each directory is
// also checked not to block file by file (the cases are about the
// closure).
func crossFileCases(t *testing.T, p *Pipeline, root, cat string) (n, caught int) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, cat, "*"))
	sort.Strings(dirs)
	for _, d := range dirs {
		files := map[string][]byte{}
		err := filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(d, p)
			files[filepath.ToSlash(rel)] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for name, b := range files {
			r, err := p.Scan(context.Background(), b, Meta{Path: name})
			if err != nil {
				t.Fatal(err)
			}
			if r.Blocked {
				t.Errorf("%s/%s blocks alone: not a cross-file case: %v", d, name, r.Blocking())
			}
		}
		r, err := p.ScanFiles(context.Background(), files, Meta{Path: filepath.Base(d), Kind: "skill"})
		if err != nil {
			t.Fatal(err)
		}
		n++
		if r.Blocked {
			caught++
		} else {
			t.Logf("missed: %s: %s", cat, filepath.Base(d))
		}
	}
	return n, caught
}
