package corpustest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const (
	// EnvVar names the directory of the real fullsend-ai/agents library.
	EnvVar = "FULLSEND_CORPUS"
	// DefaultDir is where the corpus is looked for, relative to the module
	// root, when EnvVar is unset.
	DefaultDir = "../shared/corpus/fullsend-agents"
	// SkipLine is the one line a corpus test skips with when EnvVar is
	// unset and DefaultDir is absent. .ci/run fails when it sees it.
	SkipLine = "CORPUS SKIPPED: set " + EnvVar + "=DIR (default " + DefaultDir + " not found)"

	modulePath = "github.com/fullsend-ai/fullsend"
	ownRel     = "internal/corpustest/testdata/library"
)

// Library is an agents library a test runs against, with the facts tests
// check about it.
type Library struct {
	// Name is "library" (the project's own) or "corpus" (the real one).
	Name string
	// Dir is the absolute path of the library: a fullsend dir with
	// config.yaml, harness/, agents/, skills/, ...
	Dir string
	// Main is the basename (without .yaml) of a harness with pre_script,
	// post_script, validation_loop.script and schema, an image digest,
	// local and ${VAR} host files, a plugin and github and gitlab
	// overlays. Its agent is agents/<Main>.md.
	Main string
	// MainForgeSkill is the skill reference Main's github overlay adds.
	MainForgeSkill string
	// AllForges is the basename of a harness registered under agents: in
	// config.yaml whose overlays are exactly github, gitlab and jira.
	AllForges string
	// MinHarnesses is the least number of harness/*.yaml files.
	MinHarnesses int
	// MinFiles is the least number of regular files in the library.
	MinFiles int
	// Agents are config.yaml's agents[].source values, in order.
	Agents []string
	// AllowedRemote is config.yaml's allowed_remote_resources, in order.
	AllowedRemote []string
	// PlanSkills maps "<harness>+<forge>" to skill names (frontmatter
	// names) a run plan of that harness with that overlay must contain.
	PlanSkills map[string][]string
	// Lenient lists the files (relative, slash-separated) whose frontmatter
	// is not valid YAML because of an unquoted ": " and is read leniently
	// with a notice; every other agent and skill file parses cleanly.
	Lenient []string
}

// own describes testdata/library.
var own = Library{
	Name:           "library",
	Main:           "build",
	MainForgeSkill: "skills/github-cli",
	AllForges:      "intake",
	MinHarnesses:   7,
	MinFiles:       90,
	Agents: []string{"harness/intake.yaml", "harness/build.yaml", "harness/inspect.yaml",
		"harness/inspect-strict.yaml", "harness/digest.yaml", "harness/retrospect.yaml"},
	AllowedRemote: []string{"https://raw.githubusercontent.com/fullsend-fixtures/library/",
		"https://raw.githubusercontent.com/fullsend-fixtures/shared/"},
	PlanSkills: map[string][]string{
		"retrospect+github": {"retro-notes", "locate-runs", "agent-tuning", "github", "retro-notes-github", "locate-runs-github"},
		// Two bases deep: skills of inspect, inspect-strict's queue-tools
		// and the github overlay of inspect.
		"inspect-nightly+github": {"pr-inspection", "code-inspection", "docs-drift", "queue-tools", "github", "labels", "pr-inspection-github"},
		"intake+jira":            {"jira", "labels"},
	},
	Lenient: []string{"skills/docs-drift/SKILL.md"},
}

// corpus describes the real library as CI checks it out.
var corpus = Library{
	Name:           "corpus",
	Main:           "code",
	MainForgeSkill: "skills/github-forge",
	AllForges:      "triage",
	MinHarnesses:   7,
	MinFiles:       50,
	Agents: []string{"harness/triage.yaml", "harness/code.yaml", "harness/fix.yaml",
		"harness/review.yaml", "harness/retro.yaml", "harness/prioritize.yaml"},
	AllowedRemote: []string{"https://raw.githubusercontent.com/fullsend-ai/fullsend/",
		"https://raw.githubusercontent.com/fullsend-ai/agents/"},
	PlanSkills: map[string][]string{
		"retro+github": {"retro-analysis-github", "finding-agent-runs-github", "retro-analysis", "github"},
	},
}

var (
	rootOnce sync.Once
	root     string
	rootErr  error
)

// ModuleRoot is the directory of this module's go.mod, found upwards from
// the working directory (go test runs in the package directory).
func ModuleRoot() (string, error) {
	rootOnce.Do(func() {
		wd, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		root, rootErr = findModuleRoot(wd)
	})
	return root, rootErr
}

func findModuleRoot(from string) (string, error) {
	for d := from; ; {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && moduleName(b) == modulePath {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("module %s: no go.mod in %s or above", modulePath, from)
		}
		d = parent
	}
}

func moduleName(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// Own returns the project's fixture library.
func Own(tb testing.TB) Library {
	tb.Helper()
	r, err := ModuleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	lib := own
	lib.Dir = filepath.Join(r, filepath.FromSlash(ownRel))
	if err := isLibrary(lib.Dir); err != nil {
		tb.Fatalf("fixture library %s: %v", lib.Dir, err)
	}
	return lib
}

// Corpus returns the real library, skips the test with SkipLine when it is
// not configured and not at the default place, and fails the test when
// FULLSEND_CORPUS names something that is not a library.
func Corpus(tb testing.TB) Library {
	tb.Helper()
	r, err := ModuleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return corpusAt(tb, os.Getenv(EnvVar), r)
}

func corpusAt(tb testing.TB, env, moduleRoot string) Library {
	tb.Helper()
	d, err := locate(env, moduleRoot)
	if err != nil {
		tb.Fatal(err)
	}
	if d == "" {
		announce()
		tb.Skip(SkipLine)
	}
	lib := corpus
	lib.Dir = d
	return lib
}

var announced sync.Once

// announce is announceSkip; this package's own tests of the skip decision
// replace it, since their skips are not the corpus layer's.
var announce = announceSkip

// announceSkip makes the skip visible under README's test command: `go test
// ./...` prints nothing of a package that passes, skip lines included. So,
// once per test binary, SkipLine also goes to the go command's own stderr
// (the binary's parent), with the package's directory, when that is a
// terminal or a pipe. Linux only (through /proc), and only when the parent
// is the go command; elsewhere the t.Skip line (shown with -v) is all there
// is.
func announceSkip() {
	announced.Do(func() {
		ppid := os.Getppid()
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", ppid))
		if err != nil || filepath.Base(exe) != "go" {
			return
		}
		f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/2", ppid), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return
		}
		defer f.Close()
		// Only a terminal or a pipe: a regular file has its own offset in
		// the go command, which would write over the line.
		if st, err := f.Stat(); err != nil || st.Mode().IsRegular() {
			return
		}
		wd, _ := os.Getwd()
		fmt.Fprintf(f, "%s [%s]\n", SkipLine, filepath.Base(wd))
	})
}

// Lookup returns the corpus directory (absolute), "" when FULLSEND_CORPUS
// is unset and the default directory does not exist, or an error.
func Lookup() (string, error) {
	r, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return locate(os.Getenv(EnvVar), r)
}

// locate decides where the corpus is, given the value of FULLSEND_CORPUS
// and the module root.
func locate(env, moduleRoot string) (string, error) {
	if env != "" {
		d := env
		if !filepath.IsAbs(d) {
			d = filepath.Join(moduleRoot, d)
		}
		if err := isLibrary(d); err != nil {
			return "", fmt.Errorf("%s=%s: %v", EnvVar, env, err)
		}
		return filepath.Clean(d), nil
	}
	d := filepath.Join(moduleRoot, filepath.FromSlash(DefaultDir))
	if _, err := os.Stat(d); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err := isLibrary(d); err != nil {
		return "", fmt.Errorf("corpus %s (default; set %s to choose another): %v", d, EnvVar, err)
	}
	return d, nil
}

// isLibrary checks that d looks like an agents library.
func isLibrary(d string) error {
	if st, err := os.Stat(filepath.Join(d, "config.yaml")); err != nil {
		return fmt.Errorf("not an agents library: %w", err)
	} else if !st.Mode().IsRegular() {
		return fmt.Errorf("not an agents library: %s is not a file", filepath.Join(d, "config.yaml"))
	}
	if st, err := os.Stat(filepath.Join(d, "harness")); err != nil {
		return fmt.Errorf("not an agents library: %w", err)
	} else if !st.IsDir() {
		return fmt.Errorf("not an agents library: %s is not a directory", filepath.Join(d, "harness"))
	}
	return nil
}

// Each runs f as subtest "library" on the project's library and as
// subtest "corpus" on the real one (skipped with SkipLine when absent).
func Each(t *testing.T, f func(t *testing.T, lib Library)) {
	t.Helper()
	t.Run(own.Name, func(t *testing.T) { f(t, Own(t)) })
	t.Run(corpus.Name, func(t *testing.T) { f(t, Corpus(t)) })
}

// Seeds returns the directories fuzz targets take seeds from: the
// project's library and, when found, the corpus. It never skips.
func Seeds(tb testing.TB) []string {
	tb.Helper()
	dirs := []string{Own(tb).Dir}
	d, err := Lookup()
	if err != nil {
		tb.Fatal(err)
	}
	if d != "" {
		dirs = append(dirs, d)
	}
	return dirs
}
