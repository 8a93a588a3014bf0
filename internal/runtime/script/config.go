package script

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// The script runtime's part of the runner's contract: its typed settings,
// flag and planning.
var (
	_ runtime.FlagOwner = (*Runtime)(nil)
	_ runtime.Planner   = (*Runtime)(nil)
	_ runtime.Config    = (*Config)(nil)
)

// Suffix names the default script of a harness: for a harness file H.yaml
// it is H.script.yaml beside it (e.g. examples/hello/harness.script.yaml),
// used when --script is not given.
const Suffix = ".script.yaml"

// Config is the script runtime's settings of one run.
type Config struct {
	File string // absolute host path of the script (RunInput.Options["script"])
}

// Options implements runtime.Config.
func (c *Config) Options() map[string]string { return map[string]string{"script": c.File} }

// flags is the script runtime's --script flag.
type flags struct{ file string }

// NewFlags implements runtime.FlagOwner.
func (r *Runtime) NewFlags() runtime.Flags { return &flags{} }

func (f *flags) Add(fl *pflag.FlagSet) {
	fl.StringVar(&f.file, "script", "", "script `FILE` for the script runtime (implies --runtime script; default: <harness>.script.yaml beside the harness)")
}

// Selects implements runtime.Selector: --script implies --runtime script.
func (f *flags) Selects(fl *pflag.FlagSet) bool { return f.file != "" }

// Parse checks that --script names a regular file.
func (f *flags) Parse(fl *pflag.FlagSet) (runtime.Config, []string, error) {
	if f.file == "" {
		return nil, nil, nil
	}
	st, err := os.Stat(f.file)
	switch {
	case err != nil && errors.Is(err, os.ErrNotExist):
		return nil, nil, fmt.Errorf("--script %s: no such file", f.file)
	case err != nil:
		return nil, nil, fmt.Errorf("--script %s: %w", f.file, err)
	case !st.Mode().IsRegular():
		return nil, nil, fmt.Errorf("--script %s: not a regular file", f.file)
	}
	return &Config{File: f.file}, []string{"--script"}, nil
}

// Plan implements runtime.Planner: the script is --script, else
// <harness>.script.yaml beside a local harness; it must exist and parse.
func (r *Runtime) Plan(in runtime.PlanInput) (*runtime.PlanOutput, error) {
	s := ""
	if fc, ok := in.Flags.(*Config); ok && fc != nil {
		s = fc.File
	}
	if s == "" && in.HarnessFile != "" {
		s = strings.TrimSuffix(strings.TrimSuffix(in.HarnessFile, ".yaml"), ".yml") + Suffix
	}
	if s == "" {
		return nil, &runtime.PlanError{Field: "runtime", Err: errors.New("the script runtime needs --script FILE")}
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, &runtime.PlanError{Field: "runtime", Err: fmt.Errorf("script runtime: script %s: not found (give --script FILE, or add %s beside the harness)", abs, filepath.Base(abs))}
	}
	if _, err := Load(abs); err != nil {
		return nil, &runtime.PlanError{Field: "runtime", Err: fmt.Errorf("%w: script runtime: %v", runtime.ErrCannotSucceed, strings.TrimPrefix(err.Error(), "script "))}
	}
	out := &runtime.PlanOutput{Config: &Config{File: abs}}
	out.Notes = runtime.IgnoredEffort(in.Harness)
	return out, nil
}

var _ runtime.Unguarded = (*Runtime)(nil)

// Unguarded implements runtime.Unguarded.
func (r *Runtime) Unguarded() string {
	return "the script runtime runs no model: its steps are the test's or demo's own, run in the sandbox without tool-call checks (package runtime's security matrix)"
}
