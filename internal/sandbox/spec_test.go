package sandbox_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

func TestCheckSpec(t *testing.T) {
	for _, c := range []struct {
		name string
		spec sandbox.Spec
		err  string // "" = valid
	}{
		{"empty", sandbox.Spec{}, ""},
		{"mount ok", sandbox.Spec{Mounts: []sandbox.Mount{{Source: "/src", Target: "/work/x/"}}}, ""},
		{"relative target", sandbox.Spec{Mounts: []sandbox.Mount{{Source: "/src", Target: "work"}}}, "must be absolute"},
		{"dotdot target", sandbox.Spec{Mounts: []sandbox.Mount{{Source: "/src", Target: "/work/../etc"}}}, `must not contain ".."`},
		{"relative source", sandbox.Spec{Mounts: []sandbox.Mount{{Source: "src", Target: "/w"}}}, "absolute host path"},
		{"duplicate", sandbox.Spec{Mounts: []sandbox.Mount{{Source: "/a", Target: "/w"}, {Source: "/b", Target: "/w/"}}}, "duplicate"},
		{"reserved root", sandbox.Spec{Mounts: []sandbox.Mount{{Source: "/a", Target: "/"}}}, "reserved"},
		{"reserved proc", sandbox.Spec{Mounts: []sandbox.Mount{{Source: "/a", Target: "/proc/x"}}}, "reserved"},
		{"reserved sandbox", sandbox.Spec{Mounts: []sandbox.Mount{{Source: "/a", Target: "/sandbox"}}}, "reserved"},
		{"reserved binary", sandbox.Spec{Mounts: []sandbox.Mount{{Source: "/a", Target: sandbox.BinaryPath}}}, "reserved"},
		{"allow ok", sandbox.Spec{Network: sandbox.Network{Allow: []string{"api.github.com", "*.example.com:8443", "10.0.0.1:80", "[::1]:8080"}}}, ""},
		{"allow scheme", sandbox.Spec{Network: sandbox.Network{Allow: []string{"https://x.com"}}}, "network allow"},
		{"allow mid wildcard", sandbox.Spec{Network: sandbox.Network{Allow: []string{"a.*.com"}}}, "network allow"},
		{"allow bad port", sandbox.Spec{Network: sandbox.Network{Allow: []string{"x.com:99999"}}}, "bad port"},
		{"service not loopback", sandbox.Spec{Network: sandbox.Network{Services: []string{"10.0.0.1:80"}}}, "loopback"},
		{"service no port", sandbox.Spec{Network: sandbox.Network{Services: []string{"127.0.0.1"}}}, "IP:PORT"},
		{"env name", sandbox.Spec{Env: map[string]string{"A-B": "x"}}, "invalid name"},
		{"env NUL", sandbox.Spec{Env: map[string]string{"A": "x\x00"}}, "NUL"},
		{"negative limit", sandbox.Spec{Limits: sandbox.Limits{Pids: -1}}, "negative"},
		{"relative workdir", sandbox.Spec{WorkDir: "x"}, "absolute"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := sandbox.Check(c.spec)
			if c.err == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if got.WorkDir == "" {
					t.Errorf("WorkDir not defaulted")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, sandbox.ErrInvalidSpec) {
				t.Fatalf("error %v, want ErrInvalidSpec containing %q", err, c.err)
			}
		})
	}
}

func TestCheckSortsParentsFirst(t *testing.T) {
	s, err := sandbox.Check(sandbox.Spec{Mounts: []sandbox.Mount{{Source: "/b", Target: "/w/sub"}, {Source: "/a", Target: "/w"}}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Mounts[0].Target != "/w" || s.Mounts[1].Target != "/w/sub" {
		t.Errorf("order: %+v", s.Mounts)
	}
}

func TestParseAllow(t *testing.T) {
	for in, want := range map[string]sandbox.AllowEntry{
		"API.GitHub.com.":  {Host: "api.github.com"},
		"*.example.com:81": {Host: "*.example.com", Port: 81},
		"[::1]:8080":       {Host: "::1", Port: 8080},
		"127.0.0.1:9":      {Host: "127.0.0.1", Port: 9},
	} {
		got, err := sandbox.ParseAllow(in)
		if err != nil || got != want {
			t.Errorf("ParseAllow(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}

func TestProxyEnvBothCases(t *testing.T) {
	env := sandbox.ProxyEnv(3128)
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy"} {
		if env[k] == "" {
			t.Errorf("%s not set", k)
		}
	}
	if env["https_proxy"] != "http://127.0.0.1:3128" {
		t.Errorf("https_proxy = %q", env["https_proxy"])
	}
}

func TestNeedsLinux(t *testing.T) {
	if err := sandbox.NeedsLinux("fullsend run", "linux"); err != nil {
		t.Errorf("NeedsLinux on linux = %v", err)
	}
	err := sandbox.NeedsLinux("fullsend run", "darwin")
	if !errors.Is(err, sandbox.ErrUnavailable) || err.Error() != "fullsend run: sandbox backend unavailable: it needs Linux (this is darwin)" {
		t.Errorf("NeedsLinux on darwin = %v", err)
	}
}

func TestMergeEnv(t *testing.T) {
	got := strings.Join(sandbox.MergeEnv(map[string]string{"A": "1", "B": "1"}, map[string]string{"B": "2"}), ",")
	if got != "A=1,B=2" {
		t.Errorf("MergeEnv = %s", got)
	}
}

func TestLimitsResolved(t *testing.T) {
	got := sandbox.Limits{}.Resolved()
	want := sandbox.Limits{MemoryBytes: 4 << 30, Pids: 1024, CPUs: 2, TmpBytes: 1 << 30, WorkspaceBytes: 10 << 30, OutputBytes: 64 << 20, OutputFiles: 10000, SnapshotBytes: 1 << 30}
	if got != want {
		t.Errorf("defaults: %+v, want %+v", got, want)
	}
	set := sandbox.Limits{WallTime: 5, MemoryBytes: 1, Pids: 2, CPUs: 0.5, TmpBytes: 3, WorkspaceBytes: 4, OutputBytes: 5, OutputFiles: 6, SnapshotBytes: 7}
	if got := set.Resolved(); got != set {
		t.Errorf("set values changed: %+v", got)
	}
}

func TestCheckRejectsNegativeLimits(t *testing.T) {
	for _, l := range []sandbox.Limits{{TmpBytes: -1}, {WorkspaceBytes: -1}, {OutputBytes: -1}, {OutputFiles: -1}, {SnapshotBytes: -1}, {MemoryBytes: -1}, {CPUs: -1}} {
		if _, err := sandbox.Check(sandbox.Spec{Limits: l}); !errors.Is(err, sandbox.ErrInvalidSpec) {
			t.Errorf("%+v: %v", l, err)
		}
	}
}

func TestOutputLimitError(t *testing.T) {
	err := sandbox.OutputLimitError("download /sandbox/output", 64<<20)
	if !errors.Is(err, sandbox.ErrOutputLimit) {
		t.Fatalf("not ErrOutputLimit: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "output_size") || !strings.Contains(msg, "64MiB") || !strings.Contains(msg, "/sandbox/output") {
		t.Errorf("message %q", msg)
	}
	for n, want := range map[int64]string{64 << 20: "64MiB", 1536: "1536B", 3 << 10: "3KiB", 100: "100B", 1 << 40: "1TiB", 5<<30 + 1: "5368709121B"} {
		if got := sandbox.FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLimitSupportDowngrades(t *testing.T) {
	full := sandbox.LimitEnforcement{Level: sandbox.Enforced, How: "cgroup"}
	l := sandbox.LimitSupport{Memory: sandbox.LimitEnforcement{Level: sandbox.Weaker, How: "RLIMIT_AS"}, Pids: full, CPU: sandbox.LimitEnforcement{How: "no cgroup"}, Tmp: full, Workspace: full, Output: full}
	got := strings.Join(l.Downgrades(), "|")
	if got != "memory: RLIMIT_AS (weaker)|cpus: no cgroup (not enforced)" {
		t.Errorf("downgrades %q", got)
	}
}

func TestLimitSupportJSONRoundTrip(t *testing.T) {
	in := sandbox.LimitSupport{Memory: sandbox.LimitEnforcement{Level: sandbox.Weaker, How: "RLIMIT_AS"}, Pids: sandbox.LimitEnforcement{Level: sandbox.Enforced, How: "cgroup"}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"level":"weaker"`) || !strings.Contains(string(b), `"level":"not enforced"`) {
		t.Errorf("json %s", b)
	}
	var out sandbox.LimitSupport
	if err := json.Unmarshal(b, &out); err != nil || out != in {
		t.Errorf("round trip: %+v, %v", out, err)
	}
	if err := json.Unmarshal([]byte(`{"memory":{"level":"maybe"}}`), &out); err == nil {
		t.Errorf("unknown level accepted")
	}
}
