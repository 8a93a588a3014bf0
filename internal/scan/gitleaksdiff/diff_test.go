package gitleaksdiff

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"

	"github.com/fullsend-ai/fullsend/internal/scan"
	"github.com/fullsend-ai/fullsend/internal/scan/secretrules"
)

// detection is what both sides must agree on.
type detection struct {
	rule   string
	line   int // 1-based line where the match starts
	secret string
}

func (d detection) String() string { return fmt.Sprintf("%s@%d %q", d.rule, d.line, d.secret) }

var (
	refOnce sync.Once
	refDet  *detect.Detector
	refErr  error
)

// reference runs the pinned gitleaks on content as one fragment (the
// file at path), as internal/scan emulates it.
func reference(t testing.TB, content []byte, path string) []detection {
	t.Helper()
	refOnce.Do(func() { refDet, refErr = detect.NewDetectorDefaultConfig() })
	if refErr != nil {
		t.Fatal(refErr)
	}
	// fullsend ignores the content's gitleaks:allow marks (see
	// internal/scan/secretmatch.go); gitleaks is given the same content
	// with each mark defused by a same-length spelling, so lines and
	// offsets stay put.
	raw := strings.ReplaceAll(string(content), "gitleaks:allow", "gitleaks:a11ow")
	var out []detection
	for _, f := range refDet.DetectContext(context.Background(), detect.Fragment{Raw: raw, FilePath: path}) {
		if refDet.Config.Rules[f.RuleID].Regex == nil {
			continue // path-only rules report files, not content: not scanned
		}
		out = append(out, detection{f.RuleID, f.StartLine + 1, f.Secret})
	}
	return sorted(out)
}

func ours(t testing.TB, content []byte, path string) []detection {
	t.Helper()
	ms, err := scan.SecretMatches(context.Background(), content, path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []detection
	for _, m := range ms {
		out = append(out, detection{m.Rule, m.Line, m.Secret})
	}
	return sorted(out)
}

func sorted(ds []detection) []detection {
	sort.Slice(ds, func(i, j int) bool { return ds[i].String() < ds[j].String() })
	return ds
}

// keywords maps rule ids to their keywords.
var keywords = func() map[string][]string {
	m := map[string][]string{}
	for _, r := range secretrules.Rules {
		m[r.ID] = r.Keywords
	}
	return m
}()

// outsideWindow reports whether a gitleaks detection lies where our
// prefilter does not look by design: gitleaks runs a rule over the whole
// file once any of its keywords appears anywhere, we run it around the
// keyword occurrences, so a match whose line holds none of the rule's
// keywords (e.g. sourcegraph-access-token's bare 40 hex digits in a file
// that mentions "sourcegraph" elsewhere) is not seen.
func outsideWindow(lines []string, d detection) bool {
	kws := keywords[d.rule]
	if len(kws) == 0 || d.line > len(lines) {
		return false
	}
	l := strings.ToLower(lines[d.line-1])
	for _, k := range kws {
		if strings.Contains(l, k) {
			return false
		}
	}
	return true
}

// same compares both sides on content and returns gitleaks' detections and
// how many of them are outside our windows. Every other difference fails
// t: a detection only one side has, except (a) gitleaks' outside a
// window, and (b) ours of a generic rule that gitleaks drops because such
// an outside detection on its line holds its secret.
func same(t *testing.T, content []byte, path string) ([]detection, int) {
	t.Helper()
	want, got := reference(t, content, path), ours(t, content, path)
	count := func(ds []detection) map[detection]int {
		m := map[detection]int{}
		for _, d := range ds {
			m[d]++
		}
		return m
	}
	wm, gm := count(want), count(got)
	lines := strings.Split(string(content), "\n")
	var bad []string
	outside := 0
	for _, d := range want {
		if gm[d] > 0 {
			gm[d]--
			continue
		}
		if outsideWindow(lines, d) {
			outside++
			continue
		}
		bad = append(bad, "only gitleaks: "+d.String())
	}
	for _, d := range got {
		if wm[d] > 0 {
			wm[d]--
			continue
		}
		shadowed := false
		for _, w := range want {
			shadowed = shadowed || strings.Contains(d.rule, "generic") && w.line == d.line && w.rule != d.rule &&
				strings.Contains(w.secret, d.secret) && outsideWindow(lines, w)
		}
		if !shadowed {
			bad = append(bad, "only ours: "+d.String())
		}
	}
	if len(bad) > 0 {
		t.Errorf("%s: findings differ:\n  %s\n gitleaks: %v\n ours:     %v", path, strings.Join(bad, "\n  "), want, got)
	}
	return want, outside
}

// TestTableUpToDate: the table records the pinned module's version and the
// sha256 of its default configuration (genrules' test checks the whole
// generated text).
func TestTableUpToDate(t *testing.T) {
	if !strings.Contains(config.DefaultConfig, "[[rules]]") {
		t.Fatal("gitleaks default config not embedded")
	}
	if got := sha256Hex(config.DefaultConfig); got != secretrules.SourceSHA256 {
		t.Fatalf("secretrules was generated from a config with sha256 %s, the pinned module has %s: run go generate ./internal/scan/secretrules", secretrules.SourceSHA256, got)
	}
}

// textFiles reads every file under dir that holds no NUL byte.
func textFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.IndexByte(b, 0) < 0 {
			rel, _ := filepath.Rel(dir, p)
			files[filepath.ToSlash(rel)] = b
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading %s: %v", dir, err)
	}
	if len(files) == 0 {
		t.Fatalf("%s: no text files", dir)
	}
	return files
}

// TestLibraries: every text file of the fixture library and of the agents
// corpus. FULLSEND_CORPUS set but unreadable fails; unset skips that part
// loudly.
func TestLibraries(t *testing.T) {
	dirs := map[string]string{"fixtures": filepath.Join("..", "..", "corpustest", "testdata", "library")}
	if c := os.Getenv("FULLSEND_CORPUS"); c != "" {
		if st, err := os.Stat(c); err != nil || !st.IsDir() {
			t.Fatalf("FULLSEND_CORPUS=%s: not a readable directory", c)
		}
		dirs["corpus"] = c
	} else {
		t.Log("CORPUS SKIPPED: FULLSEND_CORPUS is not set; only the fixture library is compared")
	}
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			files := textFiles(t, dir)
			n, outside := 0, 0
			for path, b := range files {
				ds, o := same(t, b, path)
				n, outside = n+len(ds), outside+o
			}
			t.Logf("%s: %d text files, %d gitleaks findings (%d outside our keyword windows)", dir, len(files), n, outside)
		})
	}
}

// TestMarksDefused: a gitleaks:allow mark hides a secret from gitleaks but
// not from fullsend, and the comparison defuses it for gitleaks.
func TestMarksDefused(t *testing.T) {
	content := []byte("api_key = \"Zx8vQ2mN4pL7rT1wY6uE3oI9aS5dF0gH\" # gitleaks:allow\n")
	found, _ := same(t, content, "app/settings.py")
	if len(found) != 1 {
		t.Fatalf("with the mark defused gitleaks reports %v, want the key", found)
	}
	if got := ours(t, content, "app/settings.py"); len(got) != 1 {
		t.Fatalf("fullsend reports %v for a marked secret, want the key", got)
	}
}
