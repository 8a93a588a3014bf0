package frontmatter

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/corpustest"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
	"github.com/fullsend-ai/fullsend/internal/yamlx/yamlxtest"
)

func TestParse(t *testing.T) {
	t.Parallel()
	doc := "---\nname: triage\ndescription: >-\n  Inspect an issue.\nskills:\n  - issue-labels  # comment\ndependencies:\n  - ../common/x#sha256=abc\ntools: Bash(gh,curl,jq), Skill\n---\n\nBody here.\n"
	fm, err := Parse("a.md", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if !fm.Present || fm.Name != "triage" || fm.Description != "Inspect an issue." || fm.Notice != "" {
		t.Fatalf("%+v", fm)
	}
	if !slices.Equal(fm.Skills, []string{"issue-labels"}) || !slices.Equal(fm.Dependencies, []string{"../common/x#sha256=abc"}) {
		t.Fatalf("lists %+v", fm)
	}
	if fm.Fields["tools"] != "Bash(gh,curl,jq), Skill" {
		t.Fatalf("fields %v", fm.Fields)
	}
	if string(fm.Body) != "\nBody here.\n" || fm.BodyLine != 11 {
		t.Fatalf("body %q line %d", fm.Body, fm.BodyLine)
	}
}

func TestNoFrontmatter(t *testing.T) {
	t.Parallel()
	fm, err := Parse("a.md", []byte("# Title\n---\n"))
	if err != nil || fm.Present || string(fm.Body) != "# Title\n---\n" {
		t.Fatalf("%+v %v", fm, err)
	}
}

func TestSkillsAsString(t *testing.T) {
	t.Parallel()
	fm, err := Parse("a.md", []byte("---\nskills: a, b ,c\n---\n"))
	if err != nil || !slices.Equal(fm.Skills, []string{"a", "b", "c"}) {
		t.Fatalf("%+v %v", fm, err)
	}
}

func TestLenientColons(t *testing.T) {
	t.Parallel()
	doc := "---\nname: x\ndescription: Use when: the build breaks. Don't panic\n---\nbody\n"
	fm, err := Parse("SKILL.md", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if fm.Description != "Use when: the build breaks. Don't panic" || fm.Name != "x" {
		t.Fatalf("%+v", fm)
	}
	if !strings.Contains(fm.Notice, "SKILL.md: frontmatter is not valid YAML") || !strings.Contains(fm.Notice, "line 3") {
		t.Fatalf("notice %q", fm.Notice)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	cases := []yamlxtest.ErrorCase{
		{Name: "unclosed", In: "---\nname: x\n", Want: "a.md:1", Err: yamlx.ErrSyntax},
		{Name: "bad yaml", In: "---\nname: [x\n---\n", Want: "a.md:", Err: yamlx.ErrSyntax},
		{Name: "duplicate", In: "---\nname: x\nname: y\n---\n", Want: "a.md:3: name", Err: yamlx.ErrDuplicate},
		{Name: "skills mapping", In: "---\nskills: {a: 1}\n---\n", Want: "a.md:2: skills", Err: yamlx.ErrType},
		{Name: "empty dep", In: "---\ndependencies: ['']\n---\n", Want: "a.md:2: dependencies[0]", Err: yamlx.ErrValue},
		{Name: "too large", In: "---\nx: " + strings.Repeat("a", MaxSize+10) + "\n---\n", Want: "a.md:1", Err: yamlx.ErrTooLarge},
		{Name: "not mapping", In: "---\n- a\n---\n", Want: "a.md:2", Err: yamlx.ErrType},
	}
	yamlxtest.CheckErrors(t, cases, func(in []byte) error {
		_, err := Parse("a.md", in)
		return err
	})
}

// libraryFiles lists the Markdown files of an agents library's agents/
// and skills/ trees, relative and slash-separated.
func libraryFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	for _, top := range []string{"agents", "skills"} {
		err := filepath.WalkDir(filepath.Join(dir, top), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".md") {
				rel, _ := filepath.Rel(dir, p)
				out = append(out, filepath.ToSlash(rel))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d Markdown files under %s", len(out), dir)
	}
	return out
}

// TestLibraries: every agent definition and SKILL.md of the project's
// library and of the real one parses with a name and a description; every
// other Markdown file there parses; the lenient reading (and its notice)
// happens for exactly the files known to need it.
func TestLibraries(t *testing.T) {
	t.Parallel()
	corpustest.Each(t, func(t *testing.T, lib corpustest.Library) {
		var sawSkill, sawAgent bool
		for _, rel := range libraryFiles(t, lib.Dir) {
			data, err := os.ReadFile(filepath.Join(lib.Dir, rel))
			if err != nil {
				t.Fatal(err)
			}
			fm, err := Parse(rel, data)
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			definition := strings.HasPrefix(rel, "agents/") || path.Base(rel) == "SKILL.md"
			sawAgent = sawAgent || strings.HasPrefix(rel, "agents/")
			sawSkill = sawSkill || path.Base(rel) == "SKILL.md"
			if definition && (!fm.Present || fm.Name == "" || fm.Description == "") {
				t.Errorf("%s: missing name/description: %+v", rel, fm.Fields)
			}
			if fm.Present && fm.Name == "" {
				t.Errorf("%s: frontmatter without a name", rel)
			}
			if lenient := slices.Contains(lib.Lenient, rel); lenient != (fm.Notice != "") {
				t.Errorf("%s: notice %q, lenient reading expected: %v", rel, fm.Notice, lenient)
			}
		}
		if !sawAgent || !sawSkill {
			t.Errorf("agents seen %v, skills seen %v", sawAgent, sawSkill)
		}
	})
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: x\ndescription: Use when: y\nskills: [a]\n---\nbody"))
	f.Add([]byte("---\ndependencies:\n  - ../x#sha256=00\n...\n"))
	f.Add([]byte("no frontmatter"))
	f.Add([]byte("---\n"))
	for _, dir := range corpustest.Seeds(f) {
		for _, rel := range libraryFiles(f, dir) {
			if data, err := os.ReadFile(filepath.Join(dir, rel)); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, err := Parse("f.md", data)
		if err != nil {
			var ye *yamlx.Error
			if !errors.As(err, &ye) || fm != nil {
				t.Fatalf("error %T %v, result %v", err, err, fm)
			}
			return
		}
		if !fm.Present {
			if !strings.HasSuffix(string(data), string(fm.Body)) {
				t.Fatal("body is not the document")
			}
			return
		}
		// The body is a suffix of the input, after the closing line.
		if !strings.HasSuffix(string(data), string(fm.Body)) || fm.BodyLine < 3 {
			t.Fatalf("body %q line %d", fm.Body, fm.BodyLine)
		}
		for _, s := range append(slices.Clone(fm.Skills), fm.Dependencies...) {
			if strings.TrimSpace(s) == "" {
				t.Fatal("empty list entry")
			}
		}
	})
}
