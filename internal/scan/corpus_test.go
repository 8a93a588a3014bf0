package scan

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/corpustest"
)

// libraryFiles reads every file of an agents library (relative,
// slash-separated names). The libraries hold benign agents, skills,
// harnesses and policies that talk about secrets, tokens, curl, prompts
// and security reviews; none of that may be critical.
func libraryFiles(t testing.TB, lib corpustest.Library) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(lib.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(lib.Dir, p)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < lib.MinFiles {
		t.Fatalf("%s has %d files, expected at least %d", lib.Dir, len(files), lib.MinFiles)
	}
	return files
}

// TestLibrariesHaveNoCriticalFindings scans every file of each library as
// local and as remote content: nothing is critical, nothing is blocked.
func TestLibrariesHaveNoCriticalFindings(t *testing.T) {
	corpustest.Each(t, func(t *testing.T, lib corpustest.Library) {
		files := libraryFiles(t, lib)
		p, err := New(DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		for _, origin := range []Origin{Local, Remote} {
			r, err := p.ScanFiles(context.Background(), files, Meta{Origin: origin})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range r.Findings {
				if f.Severity == Critical {
					t.Errorf("%s: %s:%d:%d %s %s: %s | %s", origin, f.Path, f.Line, f.Column, f.Rule, f.Severity, f.Message, f.Excerpt)
				} else {
					t.Logf("%s: %s:%d:%d %s %s: %s | %s", origin, f.Path, f.Line, f.Column, f.Rule, f.Severity, f.Message, f.Excerpt)
				}
			}
			if r.Blocked {
				t.Errorf("%s: library blocked", origin)
			}
		}
		if !strings.Contains(strings.Join(mustNotices(t, p), "\n"), NoticeMLOff) {
			t.Error("ML-off notice missing")
		}
	})
}

func mustNotices(t *testing.T, p *Pipeline) []string {
	r, err := p.Scan(context.Background(), []byte("x"), Meta{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Notices
}
