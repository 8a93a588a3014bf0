//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Rows of issue 31: an exec in a live session, the binary starts of one
// run, a 1 GB write into the workdir and cold resolution against its
// physical limit.

// helloInOneExec is what the agent of examples/hello does (read the skill,
// compose the greeting, write the result), as one shell script in one
// `sandbox exec`: the yardstick of the run row.
func (b *bench) helloInOneExec() *cmdSpec {
	script := `cat /sandbox/hello/skills/greeting/SKILL.md >/dev/null && printf 'Hello, %s!' world >/dev/null && mkdir -p /sandbox/output && printf '{"greeting":"Hello, world!","name":"world"}' >/sandbox/output/agent-result.json`
	return b.fs("sandbox", "exec", "--ro", filepath.Join(b.ws, "hello")+":/sandbox/hello", "--", "sh", "-c", script)
}

// liveExecs is how many extra exec steps the live row's script runs.
const liveExecs = 20

// live measures one exec in a live local session from whole processes: a
// run of examples/hello whose script runs liveExecs more `true` steps,
// alternating with the plain run; the difference of the medians over
// liveExecs is the cost of one exec (each step is `sh -c true`).
func (b *bench) live() error {
	const what = "exec in a live local session"
	base, err := os.ReadFile(filepath.Join(b.ws, "hello", "harness.script.yaml"))
	if err != nil {
		return err
	}
	more, err := scriptWithExecs(base, liveExecs)
	if err != nil {
		b.fail(what, err)
		return nil
	}
	if err := os.WriteFile(filepath.Join(b.ws, "hello", "many.script.yaml"), more, 0o600); err != nil {
		return err
	}
	x, y, err := pair(b.n,
		job{cmds: []*cmdSpec{b.fs("run", "--target-repo", "none", "--script", "hello/many.script.yaml", "hello/harness.yaml")}},
		&job{cmds: []*cmdSpec{b.fs("run", "--target-repo", "none", "hello/harness.yaml")}})
	if err != nil {
		b.fail(what, err)
		return nil
	}
	mx, _, _ := x.pick(func(s sample) float64 { return ms(s.wall) })
	my, _, _ := y.pick(func(s sample) float64 { return ms(s.wall) })
	b.add(row{what + " (whole processes)", "≤ 5 ms",
		fmt.Sprintf("%.1f ms per exec = (%s − %s) / %d", (mx-my)/liveExecs, wallText(x), wallText(y), liveExecs),
		fmt.Sprintf("`fullsend run --script many.script.yaml hello/harness.yaml` (examples/hello's script plus %d `exec: true` steps) / `fullsend run hello/harness.yaml`", liveExecs)})
	return nil
}

// scriptWithExecs inserts n `exec: true` steps at the top of a script
// runtime file's steps.
func scriptWithExecs(script []byte, n int) ([]byte, error) {
	const key = "\nsteps:\n"
	i := bytes.Index(script, []byte(key))
	if i < 0 {
		return nil, errors.New("examples/hello/harness.script.yaml: no top-level steps: list")
	}
	i += len(key)
	var out bytes.Buffer
	out.Write(script[:i])
	for k := 0; k < n; k++ {
		out.WriteString("  - exec:\n      cmd: 'true'\n")
	}
	out.Write(script[i:])
	return out.Bytes(), nil
}

// execveRe matches a successful execve in `strace -f -e trace=execve`
// output: the pid, the path and argv[0].
var execveRe = regexp.MustCompile(`^\d+\s+execve\("([^"]*)", \["((?:[^"\\]|\\.)*)"(?:, "((?:[^"\\]|\\.)*)")?.*\)\s+= 0$`)

// splitRe matches the first half of an execve strace -f split: the pid,
// the call so far and, when a thread other than the leader made it, the
// pid the rest appears under.
var splitRe = regexp.MustCompile(`^(\d+)\s+(execve\(.*?)\s*<(?:unfinished \.\.\.|pid changed to (\d+) \.\.\.)>$`)

// starts counts the fullsend binary starts of one `run` of examples/hello
// with strace: every successful execve of the binary, of /proc/self/exe
// (the local backend's re-executions) or of /usr/local/bin/fullsend (the
// binary inside the sandbox); every other execve is an agent command.
func (b *bench) starts() error {
	const what = "fullsend binary starts in one `run` of examples/hello"
	st, err := exec.LookPath("strace")
	if err != nil {
		b.fail(what, errors.New("strace not installed (apt-get install -y strace)"))
		return nil
	}
	log := filepath.Join(b.tmp, "strace.log")
	c := &cmdSpec{args: append([]string{st, "-f", "-qq", "-e", "trace=execve", "-e", "signal=none", "-o", log, b.bin},
		"run", "--target-repo", "none", "hello/harness.yaml"), dir: b.ws, env: b.baseEnv}
	if _, err := c.run(); err != nil {
		b.fail(what, err)
		return nil
	}
	data, err := os.ReadFile(log)
	if err != nil {
		return err
	}
	n, agent, roles := countStarts(data, b.bin)
	b.add(row{what + " (agent commands excluded)", "≤ 5",
		fmt.Sprintf("%d: %s; %d agent command execs besides", n, roles, agent),
		"`strace -f -e trace=execve fullsend run --target-repo none hello/harness.yaml`"})
	return nil
}

// countStarts reads strace output and returns the fullsend starts, the
// other execs and the starts by role ("run", "sandbox-init", ...).
func countStarts(strace []byte, bin string) (n, other int, roles string) {
	by := map[string]int{}
	unfinished := map[string]string{} // pid -> the start of its execve line
	sc := bufio.NewScanner(bytes.NewReader(strace))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		// strace -f splits a call that another process interrupts:
		// "PID execve(... <unfinished ...>" then "PID <... execve resumed>) = 0",
		// and one made by a thread other than the leader: "TID execve(...
		// <pid changed to PID ...>" then "PID <... execve resumed>) = 0".
		if m := splitRe.FindStringSubmatch(line); m != nil {
			pid := m[1]
			if m[3] != "" {
				pid = m[3]
			}
			unfinished[pid] = m[1] + " " + m[2]
			continue
		}
		if pid, rest, ok := strings.Cut(line, " "); ok && unfinished[pid] != "" {
			if tail, ok := strings.CutPrefix(strings.TrimSpace(rest), "<... execve resumed>"); ok {
				line = unfinished[pid] + tail
				delete(unfinished, pid)
			}
		}
		m := execveRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] != bin && m[1] != "/proc/self/exe" && m[1] != "/usr/local/bin/fullsend" {
			other++
			continue
		}
		n++
		var role string
		switch {
		case strings.HasPrefix(m[2], "fullsend-"): // a role, named by argv[0]
			role = strings.TrimPrefix(m[2], "fullsend-")
		case strings.HasPrefix(m[3], "fullsend-"): // the init: /proc/self/exe fullsend-sandbox-init
			role = strings.TrimPrefix(m[3], "fullsend-")
		default: // the CLI: name the command
			role = m[3]
		}
		by[role]++
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", by[k], k)
	}
	return n, other, strings.Join(parts, ", ")
}

// dd writes 1 GB (-dd-mb) into /sandbox, the memory-backed workdir a run's
// repository is copied into, alternating with bubblewrap writing the same
// into a tmpfs.
func (b *bench) dd() error {
	const what = "write into the workdir"
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		b.fail(what, errors.New("bwrap not installed (apt-get install -y bubblewrap)"))
		return nil
	}
	count := fmt.Sprintf("count=%d", b.ddMB)
	dd := []string{"dd", "if=/dev/zero", "of=/sandbox/f", "bs=1M", count}
	args := bwrapArgs(b.tmp)
	args = append(args[:len(args)-1], "--tmpfs", "/sandbox/w")
	args = append(args, dd...)
	args[len(args)-3] = "of=/sandbox/w/f"
	x, y, err := pair(b.nDD, job{cmds: []*cmdSpec{b.fs(append([]string{"sandbox", "exec", "--"}, dd...)...)}},
		&job{cmds: []*cmdSpec{{args: append([]string{bw}, args...)}}})
	if err != nil {
		b.fail(what, err)
		return nil
	}
	b.add(row{fmt.Sprintf("%d MiB %s (memory-backed /sandbox) vs bubblewrap (tmpfs)", b.ddMB, what), "≤ 1.2× bwrap",
		fmt.Sprintf("%s vs %s = %.2f×; %s", wallText(x), wallText(y), ratio(x, y), cpuText(x)),
		fmt.Sprintf("`fullsend sandbox exec -- dd if=/dev/zero of=/sandbox/f bs=1M %s` / `bwrap … --tmpfs /sandbox/w dd … of=/sandbox/w/f`", count)})
	return nil
}

// coldLimit is the physical limit of the cold resolution benchmark: its
// critical path is three round trips of 50 ms (the commit's tree listing,
// the wave of blobs it names, the shared dependency the skills name).
const coldLimit = 150 * time.Millisecond

var benchLineRe = regexp.MustCompile(`^BenchmarkColdResolve(?:-\d+)?\s+\d+\s+([0-9.]+) ns/op`)

// cold runs the cold resolution benchmark of package resolve (a fake forge
// on loopback answering every request after 50 ms) -n-cold times and
// compares its median with the physical limit.
func (b *bench) cold() error {
	const what = "cold resolution, 20-skill graph, 50 ms per request"
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "^BenchmarkColdResolve$", "-benchtime", "5x",
		"-count", strconv.Itoa(b.nCold), "./internal/resolve/")
	cmd.Dir = b.repo
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.fail(what, fmt.Errorf("go test: %v: %s", err, oneLine(string(out))))
		return nil
	}
	var s series
	for _, l := range strings.Split(string(out), "\n") {
		if m := benchLineRe.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			s = append(s, sample{wall: time.Duration(v)})
		}
	}
	if len(s) == 0 {
		b.fail(what, fmt.Errorf("no benchmark result in: %s", oneLine(string(out))))
		return nil
	}
	m, _, _ := s.pick(func(x sample) float64 { return ms(x.wall) })
	b.add(row{what + ", vs its physical limit", "≤ 1.5× limit",
		fmt.Sprintf("%s vs %.0f ms (3 round trips) = %.1f×", wallText(s), ms(coldLimit), m/ms(coldLimit)),
		fmt.Sprintf("`go test -run '^$' -bench '^BenchmarkColdResolve$' -benchtime 5x -count %d ./internal/resolve/` (in process)", b.nCold)})
	return nil
}

// loadAvg is the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
