package builtin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/fullsend-ai/fullsend/internal/cli"
	"github.com/fullsend-ai/fullsend/internal/cli/clitest"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/builtin"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/sandboxtest"
)

// TestMain: inside the local sandbox the test binary is
// /usr/local/bin/fullsend (`fullsend scan context`), and the sandbox
// re-executes it in its roles.
func TestMain(m *testing.M) {
	clitest.ActAsCLI("")
	state, err := os.MkdirTemp("", "fullsend-builtin-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	os.RemoveAll(state)
	os.Exit(code)
}

// toy is a whole runtime in one type: it has a flag (--toy-name), a typed
// Config its Planner fills from the flag and the harness, and an agent
// that writes the hello example's result for that name.
type toy struct{}

type toyConfig struct{ Name, Agent string }

func (c *toyConfig) Options() map[string]string {
	return map[string]string{"name": c.Name, "agent": c.Agent}
}

type toyFlags struct{ name string }

func (f *toyFlags) Add(fl *pflag.FlagSet) {
	fl.StringVar(&f.name, "toy-name", "", "toy runtime: the `NAME` to greet")
}

func (f *toyFlags) Parse(fl *pflag.FlagSet) (runtime.Config, []string, error) {
	if !fl.Changed("toy-name") {
		return nil, nil, nil
	}
	if strings.TrimSpace(f.name) == "" {
		return nil, nil, errors.New("--toy-name: empty value")
	}
	return &toyConfig{Name: f.name}, []string{"--toy-name"}, nil
}

var (
	_ runtime.Runtime   = toy{}
	_ runtime.FlagOwner = toy{}
	_ runtime.Planner   = toy{}
)

func (toy) NewFlags() runtime.Flags { return &toyFlags{} }

func (toy) Plan(in runtime.PlanInput) (*runtime.PlanOutput, error) {
	c := &toyConfig{Name: "nobody"}
	if fc, ok := in.Flags.(*toyConfig); ok {
		c.Name = fc.Name
	}
	c.Agent = filepath.Base(in.Harness.Agent)
	return &runtime.PlanOutput{Config: c, Notes: []string{"toy: greeting " + c.Name}}, nil
}

func (toy) Name() string                                            { return "toy" }
func (toy) ConfigDir() string                                       { return runtime.ClaudeConfigDir }
func (toy) Env(runtime.BootstrapInput) map[string]string            { return nil }
func (toy) CleanupIteration(context.Context, sandbox.Session) error { return nil }

func (toy) Bootstrap(ctx context.Context, s sandbox.Session, in runtime.BootstrapInput) error {
	return s.Upload(ctx, in.AgentFile, path.Join(runtime.ClaudeConfigDir, "agents", in.AgentName+".md"))
}

func (toy) Run(ctx context.Context, s sandbox.Session, in runtime.RunInput) (*runtime.Outcome, error) {
	result := fmt.Sprintf(`{"greeting": "Hello, %s!", "name": %q}`, in.Options["name"], in.Options["agent"])
	res, err := s.Exec(ctx, sandbox.ExecRequest{
		Args:  []string{"sh", "-c", `mkdir -p "$(dirname "$1")" && cat > "$1"`, "sh", in.ResultPath},
		Stdin: []byte(result),
	})
	if err != nil {
		return nil, err
	}
	in.Emit(runtime.Event{Kind: runtime.EventText, Text: "greeted " + in.Options["name"]})
	return &runtime.Outcome{ExitCode: res.ExitCode, StopReason: runtime.StopCompleted, Turns: 1}, nil
}

// TestToyRuntime: a runtime is one package (here one type) plus one
// entry in builtin; run and the CLI then know it by name: its flag is
// registered and refused for other runtimes, its Planner's settings reach
// its Run, and the run succeeds through `fullsend run`.
func TestToyRuntime(t *testing.T) {
	if err := sandboxtest.Unavailable("local"); err != nil {
		t.Skipf("local sandbox unavailable: %v", err)
	}
	defer builtin.Register("toy", func() runtime.Runtime { return toy{} })()
	harness, err := filepath.Abs(filepath.Join("..", "..", "..", "examples", "hello", "harness.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	runCLI := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := cli.Main(context.Background(), append([]string{"--workspace", ws}, args...), strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, errs := runCLI("run", "--runtime", "toy", "--toy-name", "toy", "--target-repo", "none", "--json", harness)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	var rep struct {
		Status  string `json:"status"`
		Runtime string `json:"runtime"`
		RunDir  string `json:"run_dir"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Status != "succeeded" || rep.Runtime != "toy" {
		t.Fatalf("run (%v): %s", err, out)
	}
	result, err := os.ReadFile(filepath.Join(rep.RunDir, "output", "agent-result.json"))
	if err != nil || !strings.Contains(string(result), `"greeting": "Hello, toy!"`) || !strings.Contains(string(result), `"name": "hello.md"`) {
		t.Errorf("result (%v): %s", err, result)
	}
	report, err := os.ReadFile(filepath.Join(rep.RunDir, "report.json"))
	if err != nil || !strings.Contains(string(report), "toy: greeting toy") {
		t.Errorf("report.json lacks the planner's note (%v):\n%s", err, report)
	}
	// The toy's flag belongs to the toy runtime only.
	code, _, errs = runCLI("run", "--runtime", "script", "--toy-name", "x", "--target-repo", "none", harness)
	if code != 2 || !strings.Contains(errs, `--toy-name: only for the toy runtime (runtime is "script")`) {
		t.Errorf("--toy-name with script: exit %d: %s", code, errs)
	}
	code, out, _ = runCLI("run", "--help")
	if code != 0 || !strings.Contains(out, "--toy-name NAME") {
		t.Errorf("run --help lacks the toy's flag (exit %d)", code)
	}
}
