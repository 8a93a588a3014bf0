package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runSandboxCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	dir := t.TempDir()
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := run(context.Background(), env, append([]string{"--fullsend-dir", filepath.Join(dir, "none"), "sandbox", "exec"}, args...))
	return code, out.String(), errb.String()
}

func TestSandboxExec(t *testing.T) {
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		t.Skip("no user namespaces")
	}
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "in"), []byte("data"), 0o644)
	for _, c := range []struct {
		name     string
		stdin    string
		args     []string
		code     int
		out, err string
	}{
		{"exit code is the command's", "", []string{"--", "sh", "-c", "exit 7"}, 7, "", ""},
		{"stdout and stdin", "piped", []string{"--", "sh", "-c", "cat; echo; id -u"}, 0, "piped\n1000\n", ""},
		{"ro mount", "", []string{"--ro", work + ":/w", "--", "sh", "-c", "cat /w/in; touch /w/x"}, 1, "data", "Read-only"},
		{"rw mount", "", []string{"--rw", work + ":/w", "--", "sh", "-c", "echo out > /w/out"}, 0, "", ""},
		{"timeout", "", []string{"--timeout", "300ms", "--", "sleep", "5"}, 124, "", "timed out"},
		{"env", "", []string{"--env", "A=b", "--", "sh", "-c", "echo $A"}, 0, "b\n", ""},
		{"no network by default", "", []string{"--", "sh", "-c", "env | grep -c -i _proxy"}, 1, "0\n", ""},
		{"allowlist sets proxy", "", []string{"--net", "example.com", "--", "sh", "-c", "echo $https_proxy"}, 0, "http://127.0.0.1:3128\n", ""},
		{"bad mount is usage", "", []string{"--rw", "nocolon", "--", "true"}, 2, "", "want SRC:DST"},
		{"bad net entry is usage", "", []string{"--net", "https://x", "--", "true"}, 2, "", "network allow"},
		{"missing command", "", []string{"--", "no-such-cmd"}, 127, "", "not found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runSandboxCLI(t, c.stdin, c.args...)
			if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errs, c.err) {
				t.Errorf("exit %d stdout %q stderr %q; want %d, %q, %q", code, out, errs, c.code, c.out, c.err)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(work, "out")); string(b) != "out\n" {
		t.Errorf("rw mount: host sees %q", b)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"": 0, "10": 10, "64K": 64 << 10, "512m": 512 << 20, "2G": 2 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v", in, got, err)
		}
	}
	if _, err := parseSize("x"); err == nil {
		t.Errorf("parseSize(x) accepted")
	}
}
