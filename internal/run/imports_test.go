package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepoImports: the host scan reads what the repository's context
// files import, through the no-follow repository root (a symlinked target
// is not in the copy: skipped), and reports an import that leaves the
// repository, with the same resolver as `fullsend scan context`.
func TestRepoImports(t *testing.T) {
	repo := t.TempDir()
	for rel, c := range map[string]string{
		"CLAUDE.md":                    "See @docs/guide.txt and @/sandbox/workspace/demo/abs.md\n",
		"docs/guide.txt":               "injected words\n",
		"abs.md":                       "absolute, inside\n",
		".claude/agents/rev.md":        "@../../docs/agent-import.md @/etc/shadow\n",
		"docs/agent-import.md":         "x\n",
		"CLAUDE.local.md":              "@docs/link.md\n",
		".claude/skills/s/SKILL.md":    "@../../../../outside.md\n",
		".claude/output-styles/o.md":   "plain\n",
		".claude/commands/c/deploy.md": "plain\n",
	} {
		p := filepath.Join(repo, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(repo, "abs.md"), filepath.Join(repo, "docs", "link.md")); err != nil {
		t.Fatal(err)
	}
	files, err := repoContextFiles(repo)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, f := range files {
		listed = append(listed, f.display)
	}
	if strings.Join(listed, ",") != "CLAUDE.md,CLAUDE.local.md,.claude/skills/s/SKILL.md,.claude/commands/c/deploy.md,.claude/agents/rev.md,.claude/output-styles/o.md" {
		t.Errorf("context files %v", listed)
	}
	got, findings, err := repoImports(repo, "/sandbox/workspace/demo", files)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range got {
		names = append(names, f.display+"="+strings.TrimSpace(string(f.data)))
		if f.kind != "context" || !f.loaded {
			t.Errorf("imported file %+v", f)
		}
	}
	if strings.Join(names, ",") != "docs/guide.txt=injected words,abs.md=absolute, inside,docs/agent-import.md=x" {
		t.Errorf("imported %v", names)
	}
	var refused []string
	for _, f := range findings {
		refused = append(refused, f.Path+":"+f.Rule)
	}
	if strings.Join(refused, ",") != ".claude/skills/s/SKILL.md:context-imports/outside-repo,.claude/agents/rev.md:context-imports/outside-repo" {
		t.Errorf("refused %v", refused)
	}
}
