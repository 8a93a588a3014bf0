//go:build linux

package attacktest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lowLimits keeps the limit attacks fast: the harness lowers the org's
// sandbox.limits (it may not raise them).
const lowLimits = "resources:\n  memory: 256Mi\n  pids: 64\n  tmp_size: 16Mi\n  workspace_size: 32Mi\n  output_size: 1Mi\n  output_files: 100\n"

// probeStep runs a probe of probe_test.go inside the sandbox, its stdout
// saved to /sandbox/output/<out>.
func probeStep(name, args, out string) string {
	return "  - exec: {cmd: \"/usr/local/bin/fullsend " + args + " > /sandbox/output/" + out + " 2>&1\", env: {FULLSEND_ATTACK_HELPER: " + name + "}, any_exit: true}\n"
}

func report(t *testing.T, dir string) map[string]any {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal([]byte(mustRead(t, filepath.Join(dir, "report.json"))), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func output(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "output", name))
	if err != nil {
		t.Fatalf("agent output %s: %v", name, err)
	}
	return string(b)
}

// Attack 2: an agent fills /tmp and /sandbox, forks without end, and
// allocates past its memory; attack 3: it opens vsock, AF_ALG and packet
// sockets; attack 6: it signals every process it can see. Each fails
// inside the sandbox, the session survives (later steps run), the limits in
// force are in report.json, and the host is unchanged.
func TestAgentResourceAndKernelAttacks(t *testing.T) {
	needSandbox(t)
	tok := token(t)
	script := "steps:\n" +
		"  - exec: {cmd: \"dd if=/dev/zero of=/tmp/fill bs=1M count=64 > /sandbox/output/tmp.txt 2>&1; rm -f /tmp/fill\", any_exit: true}\n" +
		// /sandbox/output shares the full file system: the message goes via /tmp.
		"  - exec: {cmd: \"dd if=/dev/zero of=/sandbox/workspace/fill bs=1M count=64 > /tmp/ws.txt 2>&1; rm -f /sandbox/workspace/fill; cp /tmp/ws.txt /sandbox/output/\", any_exit: true}\n" +
		"  - exec: {cmd: \"i=0; while [ $i -lt 300 ]; do sh -c 'sleep 60; : " + tok + "' & i=$((i+1)); done 2> /sandbox/output/fork.txt; echo done >> /sandbox/output/fork.txt\", any_exit: true}\n" +
		"  - exec: {cmd: \"echo alive > /sandbox/output/alive.txt\"}\n" +
		probeStep("alloc", "512", "alloc.txt") +
		probeStep("socket", "40 38 17 2 1", "socket.txt") +
		probeStep("signal", "", "signal.txt") +
		"  - exec: {cmd: \"echo still-alive > /sandbox/output/alive2.txt\"}\n" +
		"  - write_result: {value: {status: ok}}\n"
	before := snapshotHost(t)
	p := newProject(t, lowLimits, script, nil)
	dir := p.runOne()
	if s := output(t, dir, "tmp.txt"); !strings.Contains(s, "No space left") {
		t.Errorf("/tmp past tmp_size: %q", s)
	}
	if s := output(t, dir, "ws.txt"); !strings.Contains(s, "No space left") && !strings.Contains(s, "too large") {
		t.Errorf("/sandbox past workspace_size: %q", s)
	}
	if s := output(t, dir, "fork.txt"); !strings.Contains(s, "fork") && !strings.Contains(s, "Resource temporarily unavailable") {
		t.Errorf("300 processes under pids 64: %q", s)
	}
	if s := output(t, dir, "alive.txt"); s != "alive\n" {
		t.Errorf("the session did not survive the fork bomb: %q", s)
	}
	if s := output(t, dir, "alloc.txt"); strings.Contains(s, "allocated 512") {
		t.Errorf("512 MiB allocated under a 256 MiB limit: %q", s)
	}
	sock := output(t, dir, "socket.txt")
	for _, want := range []string{"family 40 EAFNOSUPPORT", "family 38 EAFNOSUPPORT", "family 17 EAFNOSUPPORT", "family 2 ok", "family 1 ok"} {
		if !strings.Contains(sock, want) {
			t.Errorf("socket probe lacks %q:\n%s", want, sock)
		}
	}
	sig := output(t, dir, "signal.txt")
	if strings.Contains(sig, " ok\n") {
		t.Errorf("the agent killed processes outside its own command:\n%s", sig)
	}
	if s := output(t, dir, "alive2.txt"); s != "still-alive\n" {
		t.Errorf("the session did not survive the signals: %q", s)
	}
	r := report(t, dir)
	lim, _ := r["sandbox"].(map[string]any)["limits"].(map[string]any)
	if lim["memory_bytes"] != float64(256<<20) || lim["pids"] != float64(64) || lim["output_bytes"] != float64(1<<20) || lim["output_files"] != float64(100) {
		t.Errorf("report.json limits = %v", lim)
	}
	notes, _ := json.Marshal(r["notes"])
	if !strings.Contains(string(notes), "memory limit 256MiB exceeded (OOM kill)") {
		t.Errorf("the OOM kill is not in the report's notes: %s", notes)
	}
	assertHostUnchanged(t, before, tok)
}

// A limit that ends the run is named in its one-line error.
func TestLimitEndsRunWithItsName(t *testing.T) {
	needSandbox(t)
	for _, c := range []struct{ name, step, want string }{
		{"memory", "  - exec: {cmd: \"/usr/local/bin/fullsend 512\", env: {FULLSEND_ATTACK_HELPER: alloc}}\n", "memory limit 256MiB exceeded (OOM kill)"},
		{"output", "  - exec: {cmd: \"head -c 3000000 /dev/zero\"}\n", "output limit output_size 1MiB exceeded"},
		{"output_files", "  - exec: {cmd: \"cd /sandbox/output && for i in $(seq 1 300); do : > f$i; done\"}\n", "output limit output_files 100 exceeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := snapshotHost(t)
			p := newProject(t, lowLimits, "steps:\n"+c.step+"  - write_result: {value: {status: ok}}\n", nil)
			code, _, stderr := p.run()
			if code != 1 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want 1 and %q", code, stderr, c.want)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\nfullsend: error") + strings.Count(stderr, "fullsend: error"); n > 1 {
				t.Errorf("more than one error line: %q", stderr)
			}
			assertHostUnchanged(t, before, "FULLSEND_ATTACK_HELPER")
		})
	}
}
