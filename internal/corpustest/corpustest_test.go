package corpustest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mkLibrary makes a minimal agents library at d.
func mkLibrary(t *testing.T, d string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(d, "harness"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "config.yaml"), []byte("version: \"1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeTB records Skip and Fatal and stops the helper the way the real
// ones do (they never return).
type fakeTB struct {
	testing.TB
	skipped, fatal string
}

type stop struct{}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Skip(args ...any)  { f.skipped = fmt.Sprint(args...); panic(stop{}) }
func (f *fakeTB) Fatal(args ...any) { f.fatal = fmt.Sprint(args...); panic(stop{}) }
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	panic(stop{})
}

func callCorpus(env, root string) (lib Library, f *fakeTB) {
	f = &fakeTB{}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stop); !ok {
				panic(r)
			}
		}
	}()
	return corpusAt(f, env, root), f
}

func TestSkipLine(t *testing.T) {
	want := "CORPUS SKIPPED: set FULLSEND_CORPUS=DIR (default ../shared/corpus/fullsend-agents not found)"
	if SkipLine != want || strings.Contains(SkipLine, "\n") {
		t.Fatalf("SkipLine = %q", SkipLine)
	}
}

// TestCorpusDecision: the variable wins and must name a library; without
// it the default beside the module root is used, skipped when absent and
// an error when present but not a library.
func TestCorpusDecision(t *testing.T) {
	base := t.TempDir()
	modRoot := filepath.Join(base, "main")
	if err := os.MkdirAll(modRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(base, "elsewhere")
	mkLibrary(t, elsewhere)

	// Unset, no default: skip with the one line, no failure.
	lib, f := callCorpus("", modRoot)
	if f.skipped != SkipLine || f.fatal != "" || lib.Dir != "" {
		t.Fatalf("no corpus: skipped %q fatal %q dir %q", f.skipped, f.fatal, lib.Dir)
	}

	// Set to a library: used, absolute.
	lib, f = callCorpus(elsewhere, modRoot)
	if f.skipped != "" || f.fatal != "" || lib.Dir != elsewhere || lib.Name != "corpus" || lib.Main != "code" {
		t.Fatalf("explicit: %+v skipped %q fatal %q", lib, f.skipped, f.fatal)
	}
	// Relative values are taken from the module root.
	lib, f = callCorpus("../elsewhere", modRoot)
	if f.fatal != "" || lib.Dir != elsewhere {
		t.Fatalf("relative: dir %q fatal %q", lib.Dir, f.fatal)
	}

	// Set to something that is not a library: the test fails, naming the
	// variable; it never skips.
	for _, bad := range []string{filepath.Join(base, "missing"), modRoot} {
		_, f = callCorpus(bad, modRoot)
		if f.skipped != "" || !strings.Contains(f.fatal, "FULLSEND_CORPUS="+bad) || !strings.Contains(f.fatal, "not an agents library") {
			t.Fatalf("bad %s: skipped %q fatal %q", bad, f.skipped, f.fatal)
		}
	}

	// Unset, default present: used.
	def := filepath.Join(base, "shared", "corpus", "fullsend-agents")
	mkLibrary(t, def)
	lib, f = callCorpus("", modRoot)
	if f.skipped != "" || f.fatal != "" || lib.Dir != def {
		t.Fatalf("default: dir %q skipped %q fatal %q", lib.Dir, f.skipped, f.fatal)
	}
	// Unset, default present but broken: fails, naming the variable.
	if err := os.RemoveAll(filepath.Join(def, "harness")); err != nil {
		t.Fatal(err)
	}
	_, f = callCorpus("", modRoot)
	if f.skipped != "" || !strings.Contains(f.fatal, def) || !strings.Contains(f.fatal, "FULLSEND_CORPUS") {
		t.Fatalf("broken default: skipped %q fatal %q", f.skipped, f.fatal)
	}
}

func TestFindModuleRoot(t *testing.T) {
	d := t.TempDir()
	sub := filepath.Join(d, "internal", "x")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := findModuleRoot(sub); err == nil {
		t.Fatal("found a module root where there is none")
	}
	if err := os.WriteFile(filepath.Join(d, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := findModuleRoot(sub); err == nil {
		t.Fatal("accepted another module's go.mod")
	}
	if err := os.WriteFile(filepath.Join(d, "go.mod"), []byte("// x\nmodule github.com/fullsend-ai/fullsend\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := findModuleRoot(sub); err != nil || r != d {
		t.Fatalf("root = %q, %v", r, err)
	}
}

// TestOwnLibrary: the fixture library is where Own says, with the files
// and harnesses its description promises.
func TestOwnLibrary(t *testing.T) {
	lib := Own(t)
	files := 0
	err := filepath.WalkDir(lib.Dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := filepath.Glob(filepath.Join(lib.Dir, "harness", "*.yaml"))
	if files < lib.MinFiles || len(hs) < lib.MinHarnesses {
		t.Fatalf("%d files, %d harnesses; want at least %d and %d", files, len(hs), lib.MinFiles, lib.MinHarnesses)
	}
	for _, p := range append([]string{"harness/" + lib.Main + ".yaml", "harness/" + lib.AllForges + ".yaml", "agents/" + lib.Main + ".md", lib.MainForgeSkill + "/SKILL.md"}, lib.Lenient...) {
		if _, err := os.Stat(filepath.Join(lib.Dir, p)); err != nil {
			t.Errorf("described file missing: %v", err)
		}
	}
	if seeds := Seeds(t); len(seeds) == 0 || seeds[0] != lib.Dir {
		t.Errorf("Seeds = %v", seeds)
	}
}

func init() { announce = func() {} }
