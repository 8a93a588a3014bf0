package cli

import (
	"strings"
	"testing"
)

func TestNeedsLinux(t *testing.T) {
	if err := needsLinux("run", "linux"); err != nil {
		t.Fatalf("linux: %v", err)
	}
	for _, goos := range []string{"darwin", "windows"} {
		want := "run: the sandbox needs Linux (this is " + goos + "); validate, resolve, lock, graph, scan and cache work here"
		if err := needsLinux("run", goos); err == nil || err.Error() != want {
			t.Errorf("%s: %v", goos, err)
		}
	}
}

// TestSandboxCommandsNeedLinux: elsewhere than on Linux, run and sandbox
// exec stop with that one line and exit 1 before touching anything, and
// doctor reports the local sandbox as needing Linux; validate still works.
func TestSandboxCommandsNeedLinux(t *testing.T) {
	old := hostOS
	hostOS = "darwin"
	t.Cleanup(func() { hostOS = old })
	for _, c := range []struct {
		args []string
		line string
	}{
		{[]string{"run", "--runtime", "script", helloHarness}, "fullsend: run: the sandbox needs Linux (this is darwin)"},
		{[]string{"run", "--json", helloHarness}, ""},
		{[]string{"sandbox", "exec", "--", "true"}, "fullsend: sandbox exec: the sandbox needs Linux (this is darwin)"},
	} {
		code, out, errs := runCLI(t, c.args...)
		if code != ExitFailure {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out, errs)
			continue
		}
		if c.line == "" { // --json: the error is in the JSON document
			if !strings.Contains(out, "the sandbox needs Linux (this is darwin)") {
				t.Errorf("%v: stdout %q", c.args, out)
			}
			continue
		}
		if !strings.HasPrefix(errs, c.line) || strings.Count(errs, "\n") != 1 || out != "" {
			t.Errorf("%v: stdout %q, stderr %q, want the one line %q…", c.args, out, errs, c.line)
		}
	}
	checks := doctorLocal(t.Context(), doctorFail)
	if len(checks) != 1 || checks[0].Status != doctorFail || !strings.Contains(checks[0].Detail, "local sandbox: sandbox backend unavailable: it needs Linux (this is darwin)") {
		t.Errorf("doctor on darwin: %+v", checks)
	}
	if code, out, errs := runCLI(t, "validate", helloHarness); code != ExitOK {
		t.Errorf("validate on darwin: exit %d, %q, %q", code, out, errs)
	}
}
