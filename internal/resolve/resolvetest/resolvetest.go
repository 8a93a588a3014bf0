package resolvetest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// Evil is the marker Scanner blocks.
const Evil = "EVIL"

// Scanner blocks every file containing Evil (rule "fake/evil", critical)
// and records each scan. With RequireRemote it also blocks content not
// scanned as remote (rule "fake/origin"): the runtime fetch service must
// scan everything it fetches as remote content.
type Scanner struct {
	RequireRemote bool

	mu      sync.Mutex
	calls   int
	scanned []string
}

// ScanFiles implements the scanner interfaces of resolve and fetchsvc.
func (s *Scanner) ScanFiles(_ context.Context, files map[string][]byte, m scan.Meta) (*scan.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	res := &scan.Result{}
	if s.RequireRemote && m.Origin != scan.Remote {
		res.Findings = append(res.Findings, scan.Finding{Scanner: "fake", Rule: "fake/origin", Severity: scan.Critical, Path: m.Path, Message: "runtime fetches must be scanned as remote"})
		res.Blocked = true
	}
	for name, b := range files {
		p := m.Path + "/" + name
		s.scanned = append(s.scanned, p)
		if bytes.Contains(b, []byte(Evil)) {
			res.Findings = append(res.Findings, scan.Finding{Scanner: "fake", Rule: "fake/evil", Severity: scan.Critical, Path: p, Message: "evil content"})
			res.Blocked = true
		}
	}
	return res, nil
}

// Calls is the number of ScanFiles calls so far.
func (s *Scanner) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Scanned lists the paths ("META.PATH/NAME") of every file scanned so far.
func (s *Scanner) Scanned() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.scanned...)
}

// Repo is a forge repository under construction: Files maps paths to
// content, ready for forgetest.Repos.
type Repo struct {
	Files map[string][]byte
}

// NewRepo returns an empty repository.
func NewRepo() *Repo { return &Repo{Files: map[string][]byte{}} }

// File adds one file and returns its sha256.
func (r *Repo) File(path, content string) ref.Digest {
	r.Files[path] = []byte(content)
	return ref.SHA256([]byte(content))
}

// Skill adds the skill directory dir: a SKILL.md whose frontmatter has name
// (the last element of dir when name is "") and deps as its dependencies,
// plus extra files (relative to dir). It returns the directory's tree hash.
func (r *Repo) Skill(t testing.TB, dir, name string, deps []string, extra map[string]string) ref.Digest {
	t.Helper()
	if name == "" {
		name = dir[strings.LastIndexByte(dir, '/')+1:]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\ndescription: the %s skill\n", name, name)
	if len(deps) > 0 {
		b.WriteString("dependencies:\n")
		for _, d := range deps {
			fmt.Fprintf(&b, "  - %q\n", d)
		}
	}
	fmt.Fprintf(&b, "---\n# %s\nDo the %s thing.\n", name, name)
	tree := map[string][]byte{"SKILL.md": []byte(b.String())}
	for k, v := range extra {
		tree[k] = []byte(v)
	}
	for k, v := range tree {
		r.Files[dir+"/"+k] = v
	}
	d, err := cas.TreeHash(tree)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Pin appends the "#sha256=" pin of d to the URL u.
func Pin(u string, d ref.Digest) string { return u + "#sha256=" + string(d) }
