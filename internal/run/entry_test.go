package run_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// calls records which of a Request's services Run called, in order.
type calls []string

// request is a Request for harnessYAML in the fixture whose services
// record their calls; CheckPlan, PrepareRunsDir and SandboxOptions return
// the errors given (nil: succeed).
func (f *fixture) request(harnessYAML string, o run.Options, c *calls, checkErr, dirErr, sbErr error) run.Request {
	f.t.Helper()
	hp := f.write("harness.yaml", harnessYAML)
	store, err := cas.Open(filepath.Join(f.workspace, ".fullsend-cache"))
	if err != nil {
		f.t.Fatal(err)
	}
	if o.Workspace == "" {
		o.Workspace = f.workspace
	}
	switch o.TargetRepo { // "cwd": the default lookup from Cwd
	case "cwd":
		o.TargetRepo = ""
	case "":
		o.TargetRepo = "none"
	}
	o.FullsendDir, o.Getenv = f.dir, f.getenv
	return run.Request{
		Options: o,
		Resolve: func(ctx context.Context) (*resolve.Result, error) {
			*c = append(*c, "resolve")
			return resolve.Resolve(ctx, hp, resolve.Options{Config: f.cfg, Root: f.dir, Store: store, Offline: true})
		},
		LoadConfig: func(dir string) (*config.Config, error) {
			*c = append(*c, "config:"+dir)
			return f.cfg, nil
		},
		CheckPlan: func(p *run.Plan) error {
			*c = append(*c, "check:"+p.Runtime)
			return checkErr
		},
		PrepareRunsDir: func(dir string) error {
			*c = append(*c, "runsdir")
			return dirErr
		},
		SandboxOptions: func(_ *config.Config, backend string, _ *sandbox.Options) error {
			*c = append(*c, "sandbox:"+backend)
			return sbErr
		},
	}
}

// TestRunCheckOrder: Run makes its checks in the order the CLI's contract
// states, each stopping the run before the next step and before anything
// is provisioned; the caller's settings errors are *UsageError.
func TestRunCheckOrder(t *testing.T) {
	for _, k := range []string{"FULLSEND_MODEL", "FULLSEND_MODEL_API", "FULLSEND_MODEL_BASE_URL", "FULLSEND_MODEL_AUTH", "FULLSEND_MODEL_KEY_ENV", "FULLSEND_API_KEY"} {
		t.Setenv(k, "")
	}
	errCheck, errDir, errSandbox := errors.New("check refused"), errors.New("no runs dir"), errors.New("no backend settings")
	script := func(f *fixture) run.Options {
		return run.Options{Runtime: "script", RuntimeFlags: scriptFlags(filepath.Join(f.dir, "script.yaml"))}
	}
	for _, tc := range []struct {
		name    string
		harness string
		opts    func(f *fixture) run.Options
		errs    [3]error // CheckPlan, PrepareRunsDir, SandboxOptions
		accept  string   // scan-accept.yaml content ("" = none)
		want    func(error) bool
		calls   string
	}{
		{"harness runtime name", strings.Replace(baseHarness, "runtime: script", "runtime: bogus", 1), func(*fixture) run.Options { return run.Options{} }, [3]error{}, "",
			func(err error) bool {
				var ye *yamlx.Error
				return errors.As(err, &ye) && strings.Contains(err.Error(), "unknown runtime")
			}, "resolve config"},
		{"no target repository", baseHarness, func(f *fixture) run.Options {
			o := script(f)
			o.TargetRepo, o.Cwd = "cwd", t.TempDir()
			return o
		}, [3]error{}, "",
			func(err error) bool {
				var ue *run.UsageError
				return errors.As(err, &ue) && errors.Is(err, run.ErrNoTargetRepo)
			}, "resolve config"},
		{"malformed acceptances", baseHarness, script, [3]error{}, "{{{",
			func(err error) bool { return err != nil && strings.Contains(err.Error(), "scan-accept.yaml") }, "resolve config"},
		{"caller's check first", baseHarness, func(*fixture) run.Options { return run.Options{Runtime: "native"} }, [3]error{errCheck}, "",
			func(err error) bool { return errors.Is(err, errCheck) }, "resolve config check:native"},
		{"resumed run keeps native", baseHarness, func(*fixture) run.Options { return run.Options{Resume: "20990101T000000.000Z-abcdef"} }, [3]error{errCheck}, "",
			func(err error) bool { return errors.Is(err, errCheck) }, "resolve config check:native"},
		{"native model settings", baseHarness, func(*fixture) run.Options { return run.Options{Runtime: "native"} }, [3]error{}, "",
			func(err error) bool {
				var ue *run.UsageError
				return errors.As(err, &ue) && strings.HasPrefix(err.Error(), "runtime native: ")
			}, "resolve config check:native"},
		{"runs directory", baseHarness, script, [3]error{nil, errDir}, "",
			func(err error) bool {
				return errors.Is(err, errDir) && strings.HasPrefix(err.Error(), "run directory: ")
			}, "resolve config check:script runsdir"},
		{"sandbox options", baseHarness, script, [3]error{nil, nil, errSandbox}, "",
			func(err error) bool { return errors.Is(err, errSandbox) }, "resolve config check:script runsdir sandbox:local"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			if tc.accept != "" {
				f.write("scan-accept.yaml", tc.accept)
			}
			var c calls
			req := f.request(tc.harness, tc.opts(f), &c, tc.errs[0], tc.errs[1], tc.errs[2])
			rep, err := run.Run(context.Background(), req)
			if rep != nil || !tc.want(err) {
				t.Fatalf("report %v, err %v", rep, err)
			}
			got := strings.ReplaceAll(strings.Join(c, " "), "config:"+f.dir, "config")
			if got != tc.calls {
				t.Errorf("calls %q, want %q", got, tc.calls)
			}
		})
	}
}
