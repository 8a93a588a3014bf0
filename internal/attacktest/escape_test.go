//go:build linux

package attacktest

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
)

// Attack 8 (escapes, through the runner): a hostile agent tries to read a
// host file outside its mounts, write to the host, reach a service on the
// host's loopback (directly and through the egress proxy), write to system
// directories, create namespaces, and leave a process behind. Each attempt
// fails; the host is unchanged.
func TestAgentEscapeAttempts(t *testing.T) {
	needSandbox(t)
	tok := token(t)
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret")
	if err := os.WriteFile(secret, []byte("SECRET-"+tok), 0o600); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(t.TempDir(), tok)

	ln, accepted := fetchtest.Sink(t)
	port := ln.Addr().(*net.TCPAddr).Port
	portS := strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:")

	attempts := []string{
		"cat " + secret + " > /sandbox/output/leak-read 2>&1",
		"echo pwned > " + mark,
		"mkdir -p " + filepath.Dir(mark) + " && echo pwned > " + mark,
		"bash -c 'exec 3<>/dev/tcp/127.0.0.1/" + portS + " && echo hi >&3' 2>/dev/null",
		"curl -s --noproxy '*' --max-time 3 http://127.0.0.1:" + portS + "/ ",
		"curl -s --max-time 3 http://127.0.0.1:" + portS + "/ > /sandbox/output/leak-proxy 2>&1",
		"curl -s --max-time 3 -x \"$HTTP_PROXY\" http://localhost:" + portS + "/",
		"touch /usr/local/bin/" + tok + " /usr/" + tok + " /etc/" + tok,
		"unshare -U true",
		"unshare -m true",
		"mount -t tmpfs none /sandbox/workspace",
		"setsid sh -c 'sleep 600 # " + tok + "' > /dev/null 2>&1 < /dev/null &",
		"nohup sh -c 'sleep 600 # " + tok + "' > /dev/null 2>&1 &",
	}
	var b strings.Builder
	b.WriteString("steps:\n")
	for _, a := range attempts {
		b.WriteString("  - exec: {cmd: " + quote(a) + ", any_exit: true}\n")
	}
	b.WriteString("  - write_result: {value: {status: ok}}\n")

	before := snapshotHost(t)
	p := newProject(t, "", b.String(), nil)
	dir := p.runOne()
	// The attempts ran: the read's error message is in the output.
	if b, err := os.ReadFile(filepath.Join(dir, "output", "leak-read")); err != nil || !strings.Contains(string(b), "No such file") {
		t.Fatalf("the read attempt did not run as expected: %q %v", b, err)
	}
	if f := fileHas(dir, "SECRET-"+tok); f != "" {
		t.Errorf("ATTACK SUCCEEDED: the host secret reached %s", f)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("ATTACK SUCCEEDED: the host loopback service on port %d accepted %d connections from the sandbox", port, n)
	}
	for _, p := range []string{"/usr/local/bin/" + tok, "/usr/" + tok, "/etc/" + tok} {
		if _, err := os.Lstat(p); err == nil {
			os.Remove(p)
			t.Errorf("ATTACK SUCCEEDED: %s was created on the host", p)
		}
	}
	assertHostUnchanged(t, before, tok, mark)
}

// quote makes s a YAML double-quoted scalar.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
