package reexec

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/hostsvc"
	"github.com/fullsend-ai/fullsend/internal/sandbox/docker"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local/guest"
)

func TestMain(m *testing.M) {
	Main()
	os.Exit(m.Run())
}

func TestList(t *testing.T) {
	var got []string
	for _, r := range roles {
		got = append(got, r.env)
	}
	want := []string{guest.EnvRole, hostsvc.EnvServices, docker.EnvForward}
	if !slices.Equal(got, want) {
		t.Fatalf("roles = %v, want %v (guest first)", got, want)
	}
}

// TestDispatch: the first set variable wins, it is gone from the
// environment when its role runs, and the others are left alone.
func TestDispatch(t *testing.T) {
	const a, b = "FULLSEND_REEXEC_TEST_A", "FULLSEND_REEXEC_TEST_B"
	var ran []string
	list := []role{
		{a, func(v string) int {
			ran = append(ran, "a="+v+" env="+os.Getenv(a)+" b="+os.Getenv(b))
			return 7
		}},
		{b, func(v string) int { ran = append(ran, "b="+v); return 8 }},
	}
	if code, ok := dispatch(list); ok || code != 0 || ran != nil {
		t.Fatalf("no variable set: dispatch = %d, %v (ran %v)", code, ok, ran)
	}
	t.Setenv(a, "")
	t.Setenv(b, "y")
	if code, ok := dispatch(list); !ok || code != 8 || strings.Join(ran, ";") != "b=y" {
		t.Fatalf("b set: dispatch = %d, %v (ran %v)", code, ok, ran)
	}
	if _, set := os.LookupEnv(b); set {
		t.Fatal("b still in the environment")
	}
	ran = nil
	t.Setenv(a, "x")
	t.Setenv(b, "y")
	if code, ok := dispatch(list); !ok || code != 7 || strings.Join(ran, ";") != "a=x env= b=y" {
		t.Fatalf("a and b set: dispatch = %d, %v (ran %v)", code, ok, ran)
	}
}

// self runs this test binary with env added and returns its exit status
// and combined output.
func self(t *testing.T, env ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// TestMainRoles: Main, first in TestMain, turns this binary into the
// selected role; an unknown sandbox role fails closed.
func TestMainRoles(t *testing.T) {
	if code, out := self(t, guest.EnvRole+"=no-such-role"); code != 120 || !strings.Contains(out, `fullsend sandbox no-such-role: unknown role "no-such-role"`) {
		t.Errorf("unknown role: exit %d, %q", code, out)
	}
	if code, out := self(t, guest.EnvRole+"=hold"); code != 0 || out != "" {
		t.Errorf("hold with stdin closed: exit %d, %q", code, out)
	}
	if code, out := self(t, hostsvc.EnvServices+"=10.0.0.1:80", "HTTP_PROXY=http://127.0.0.1:9"); code != 1 || !strings.Contains(out, "want a loopback IP:PORT") {
		t.Errorf("host services forwarder: exit %d, %q", code, out)
	}
	if code, out := self(t); code != 0 || !strings.Contains(out, "no tests to run") {
		t.Errorf("no role: exit %d, %q", code, out)
	}
}
