package scan

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusDir holds real, benign fullsend agents, skills, harnesses and
// policies. They talk about secrets, tokens, curl, prompts and security
// reviews; none of that may be critical.
const corpusDir = "../../../shared/corpus/fullsend-agents"

func corpusFiles(t testing.TB) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(corpusDir, func(p string, d fs.DirEntry, err error) error {
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
		rel, _ := filepath.Rel(corpusDir, p)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Skipf("corpus not available: %v", err)
	}
	if len(files) < 50 {
		t.Fatalf("corpus has %d files, expected the full fullsend-agents tree", len(files))
	}
	return files
}

func TestCorpusHasNoCriticalFindings(t *testing.T) {
	files := corpusFiles(t)
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
			t.Errorf("%s: corpus blocked", origin)
		}
	}
	if !strings.Contains(strings.Join(mustNotices(t, p), "\n"), NoticeMLOff) {
		t.Error("ML-off notice missing")
	}
}

func mustNotices(t *testing.T, p *Pipeline) []string {
	r, err := p.Scan(context.Background(), []byte("x"), Meta{})
	if err != nil {
		t.Fatal(err)
	}
	return r.Notices
}
