package run_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime/claude"
)

const claudeHarness = `agent: agents/tester.md
policy: policies/p.yaml
runtime: claude
effort: medium
timeout_minutes: 5
`

// fakeCLI writes a file that looks like a native Claude Code build.
func fakeCLI(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(p, []byte("\x7fELF fake build"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPlanClaudeCLI: the CLI of config.yaml (or --claude-binary) is bound
// read-only into the local sandbox; options go flag > harness > config;
// the docker backend uses its image's CLI; a CLI that cannot be found
// fails the run before anything is provisioned.
func TestPlanClaudeCLI(t *testing.T) {
	f := newFixture(t)
	bin := fakeCLI(t)
	f.cfg.Runtimes.Claude.Binary = bin
	f.cfg.Runtimes.Claude.MaxTurns = 40
	f.cfg.Runtimes.Claude.PermissionMode = "acceptEdits"
	f.cfg.Runtimes.Claude.Effort = "low"
	p, err := f.planKeep(claudeHarness, run.Options{RuntimeFlags: claudeFlags(claude.Config{PermissionMode: "plan"}, "", "opus-x")})
	if err != nil {
		t.Fatal(err)
	}
	if installOf(p) == nil || installOf(p).Host != bin {
		t.Fatalf("claude install %+v", p.Install)
	}
	found := false
	for _, m := range p.Spec.Mounts {
		if m.Source == bin && m.Target == claude.SandboxBinary && m.ReadOnly {
			found = true
		}
	}
	if !found {
		t.Errorf("mounts %+v lack the CLI", p.Spec.Mounts)
	}
	want := map[string]string{claude.OptBinary: claude.SandboxBinary, claude.OptMaxTurns: "40", claude.OptPermissionMode: "plan", claude.OptEffort: "medium"}
	if fmt.Sprint(p.RunOptions()) != fmt.Sprint(want) || p.Model != "opus-x" {
		t.Errorf("run options %v model %q, want %v", p.RunOptions(), p.Model, want)
	}

	// --claude-binary wins over the config.
	other := fakeCLI(t)
	p, err = f.planKeep(claudeHarness, run.Options{RuntimeFlags: claudeFlags(claude.Config{}, other, "")})
	if err != nil || installOf(p).Host != other {
		t.Fatalf("--claude-binary: %+v %v", p.Install, err)
	}

	// docker: no mount, a note.
	p, err = f.planKeep(claudeHarness, run.Options{Sandbox: "docker"})
	if err != nil || p.Install != nil || !strings.Contains(strings.Join(p.Notes, "\n"), "runs the Claude Code CLI installed in the sandbox image") {
		t.Fatalf("docker: %+v %v %q", p.Install, err, p.Notes)
	}

	// Not found: planning succeeds, the run stops before provisioning.
	f.cfg.Runtimes.Claude.Binary = ""
	f.env["PATH"] = filepath.Join(t.TempDir(), "empty-bin")
	p, err = f.planKeep(claudeHarness, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cerr := p.CheckRuntime()
	if !errors.Is(cerr, claude.ErrNotFound) || !strings.Contains(cerr.Error(), `looked for "claude" in PATH (`+f.env["PATH"]+`)`) {
		t.Fatalf("CheckRuntime = %v", cerr)
	}
	rep, _, err := f.execute(p, run.ExecOptions{SandboxOptions: sandboxOpts(f.tmp)})
	if !errors.Is(err, claude.ErrNotFound) || rep.Status != run.StatusFailed {
		t.Fatalf("execute: %v, status %s", err, rep.Status)
	}
	for _, ph := range rep.Phases {
		if ph.Name == "provision" || ph.Name == "host_scan" {
			t.Errorf("phase %s ran although the CLI is missing", ph.Name)
		}
	}
}

// TestPlanHostServices: the org's host services and, for the claude
// runtime, a loopback endpoint of the runner's model configuration join
// the spec's services; nothing else does.
func TestPlanHostServices(t *testing.T) {
	f := newFixture(t)
	f.cfg.Runtimes.Claude.Binary = fakeCLI(t)
	f.cfg.Sandbox.HostServices = []string{"127.0.0.1:4000"}
	f.env["FULLSEND_MODEL_BASE_URL"] = "http://localhost:8080/v1"
	f.env["ANTHROPIC_BASE_URL"] = "https://api.anthropic.com"
	p, err := f.planKeep(claudeHarness, run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(p.HostServices)
	if got != "[{127.0.0.1:4000 config.yaml sandbox.host_services} {127.0.0.1:8080 runner FULLSEND_MODEL_BASE_URL}]" {
		t.Errorf("host services %s", got)
	}
	if fmt.Sprint(p.Spec.Network.Services) != "[127.0.0.1:4000 127.0.0.1:8080]" {
		t.Errorf("spec services %v", p.Spec.Network.Services)
	}
	// The script runtime gets the org's services only.
	p, err = f.plan(claudeHarness, run.Options{})
	if err != nil || fmt.Sprint(p.Spec.Network.Services) != "[127.0.0.1:4000]" {
		t.Errorf("script runtime: %v %v", p.Spec.Network.Services, err)
	}
}

// hostService serves on the runner's loopback; hold makes /hold wait until
// the test ends.
func hostService(t *testing.T) (addr string, reqs chan string) {
	t.Helper()
	reqs = make(chan string, 16)
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqs <- r.URL.Path
		if r.URL.Path == "/hold" {
			select {
			case <-r.Context().Done():
			case <-stop:
			}
			return
		}
		io.WriteString(w, "host-service-says-hi")
	}))
	t.Cleanup(func() { close(stop); srv.CloseClientConnections(); srv.Close() })
	return srv.Listener.Addr().String(), reqs
}

// hostServiceFixture starts a host service and a fixture that lists it in
// sandbox.host_services, with a script whose first exec sends GET path to
// it from the sandbox; rest follows that exec's args line. It returns the
// fixture, the service's address and the paths it was asked for.
func hostServiceFixture(t *testing.T, path, rest string) (*fixture, string, chan string) {
	t.Helper()
	addr, reqs := hostService(t)
	host, port, _ := net.SplitHostPort(addr)
	f := newFixture(t)
	f.cfg.Sandbox.HostServices = []string{addr}
	f.write("script.yaml", `steps:
  - exec:
      args: [bash, -c, 'exec 3<>/dev/tcp/`+host+`/`+port+` && printf "GET `+path+` HTTP/1.0\r\nHost: x\r\n\r\n" >&3 && cat <&3']
`+rest)
	return f, addr, reqs
}

// TestHostServiceInSandbox: inside the sandbox the host service answers at
// its own address, through the sandbox's loopback (NO_PROXY keeps it
// there) and the forwarder; another loopback port of the host does not.
func TestHostServiceInSandbox(t *testing.T) {
	needLocal(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ohost, oport, _ := net.SplitHostPort(closed.Addr().String())
	f, addr, reqs := hostServiceFixture(t, "/in-sandbox", `      expect_stdout_contains: host-service-says-hi
  - exec:
      args: [bash, -c, 'exec 3<>/dev/tcp/`+ohost+`/`+oport+`']
      expect_exit: 1
  - write_result: {value: {status: ok}}
`)
	closed.Close() // after the host service took its port, so never the same one
	p := f.mustPlan(baseHarness, run.Options{})
	rep, _, err := f.execute(p, run.ExecOptions{SandboxOptions: sandboxOpts(f.tmp)})
	if err != nil {
		t.Fatalf("run: %v (%s)", err, rep.Error)
	}
	select {
	case got := <-reqs:
		if got != "/in-sandbox" {
			t.Errorf("host service got %q", got)
		}
	default:
		t.Error("the host service saw no request from the sandbox")
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "host services reachable from the sandbox at the same address: "+addr+" (config.yaml sandbox.host_services)") {
		t.Errorf("notes %q", rep.Notes)
	}
}

// TestTimeoutStopsAndTearsDown: at the wall time the run stops with
// status timeout and one error line, without downloading, and tears down
// while the agent still holds a request open on a host service (the
// proxy cuts it).
func TestTimeoutStopsAndTearsDown(t *testing.T) {
	needLocal(t)
	f, _, reqs := hostServiceFixture(t, "/hold", "")
	p := f.mustPlan(baseHarness, run.Options{})
	p.WallTime = 3 * time.Second
	start := time.Now()
	rep, _, err := f.execute(p, run.ExecOptions{SandboxOptions: sandboxOpts(f.tmp)})
	took := time.Since(start)
	if !errors.Is(err, run.ErrTimeout) || rep.Status != run.StatusTimeout || rep.ExitCode != 1 || rep.Error != "timeout: the agent did not finish within timeout_minutes (3s)" {
		t.Fatalf("err %v, status %s, exit %d, error %q", err, rep.Status, rep.ExitCode, rep.Error)
	}
	select {
	case <-reqs:
	default:
		t.Fatal("the held request never reached the host service")
	}
	for _, ph := range rep.Phases {
		if strings.HasPrefix(ph.Name, "download") || strings.HasPrefix(ph.Name, "validate") {
			t.Errorf("phase %s ran after the timeout", ph.Name)
		}
	}
	t.Logf("wall time 3s, run took %s (grace %s)", took, run.TimeoutGrace)
	if took > 3*time.Second+run.TimeoutGrace+20*time.Second { // a hang guard, not a speed figure
		t.Errorf("run took %s", took)
	}
}

// installOf is the claude runtime's CLI install of a plan (nil: none).
func installOf(p *run.Plan) *claude.Install {
	in, _ := p.Install.(*claude.Install)
	return in
}
