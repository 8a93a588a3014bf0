//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
)

// sample is one finished process (or one group of processes run one after
// another, for the hook row).
type sample struct {
	wall, cpu time.Duration
	maxRSS    int64 // bytes, the largest of the group
}

// series is a list of samples of one command line.
type series []sample

func (s series) pick(f func(sample) float64) (med, lo, hi float64) {
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = f(x)
	}
	sort.Float64s(v)
	return v[len(v)/2], v[0], v[len(v)-1]
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// job is one command (or a group of commands run back to back) and how to
// check that it did what it should.
type job struct {
	cmds []*cmdSpec
}

type cmdSpec struct {
	args  []string
	dir   string
	env   []string
	stdin []byte
	codes []int // accepted exit codes (default: 0)
	// stdout, when set, is given the command's standard output after a
	// successful run; an error from it fails the sample.
	stdout func([]byte) error
}

func (c *cmdSpec) run() (sample, error) {
	cmd := exec.Command(c.args[0], c.args[1:]...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), c.env...)
	if c.stdin != nil {
		cmd.Stdin = bytes.NewReader(c.stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	t := time.Now()
	err := cmd.Run()
	wall := time.Since(t)
	st := cmd.ProcessState
	if st == nil {
		return sample{}, fmt.Errorf("%s: %v", c.args[0], err)
	}
	code := st.ExitCode()
	ok := false
	if len(c.codes) == 0 {
		ok = code == 0
	}
	for _, k := range c.codes {
		ok = ok || code == k
	}
	if !ok {
		return sample{}, fmt.Errorf("%s exited %d: %s", strings.Join(c.args, " "), code, oneLine(out.String()+" "+errOut.String()))
	}
	if c.stdout != nil {
		if err := c.stdout(out.Bytes()); err != nil {
			return sample{}, fmt.Errorf("%s: %v", strings.Join(c.args, " "), err)
		}
	}
	var rss int64
	if ru, _ := st.SysUsage().(*syscall.Rusage); ru != nil {
		rss = ru.Maxrss * 1024 // Linux reports KiB
	}
	return sample{wall: wall, cpu: st.UserTime() + st.SystemTime(), maxRSS: rss}, nil
}

func (j job) run() (sample, error) {
	var s sample
	for _, c := range j.cmds {
		x, err := c.run()
		if err != nil {
			return s, err
		}
		s.wall += x.wall
		s.cpu += x.cpu
		s.maxRSS = max(s.maxRSS, x.maxRSS)
	}
	return s, nil
}

// pair alternates a and b (b may be empty) n times after one warm-up run of
// each, swapping the order every round so neither always goes first.
func pair(n int, a job, b *job) (sa, sb series, err error) {
	if _, err := a.run(); err != nil {
		return nil, nil, err
	}
	if b != nil {
		if _, err := b.run(); err != nil {
			return nil, nil, err
		}
	}
	for i := 0; i < n; i++ {
		first, second := &a, b
		if i%2 == 1 && b != nil {
			first, second = b, &a
		}
		x, err := first.run()
		if err != nil {
			return nil, nil, err
		}
		var y sample
		if second != nil {
			if y, err = second.run(); err != nil {
				return nil, nil, err
			}
		}
		if first == &a {
			sa = append(sa, x)
			if b != nil {
				sb = append(sb, y)
			}
		} else {
			sb = append(sb, x)
			sa = append(sa, y)
		}
	}
	return sa, sb, nil
}

// row is one line of the result table.
type row struct {
	what, target, measured, command string
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

func wallText(s series) string {
	m, lo, hi := s.pick(func(x sample) float64 { return ms(x.wall) })
	return fmt.Sprintf("%.1f ms (%.1f–%.1f)", m, lo, hi)
}

func cpuText(s series) string {
	m, _, _ := s.pick(func(x sample) float64 { return ms(x.cpu) })
	return fmt.Sprintf("%.1f ms CPU", m)
}

func rssText(s series) string {
	m, _, hi := s.pick(func(x sample) float64 { return float64(x.maxRSS) / (1 << 20) })
	return fmt.Sprintf("peak RSS %.0f MiB (max %.0f)", m, hi)
}

func ratio(a, b series) float64 {
	ma, _, _ := a.pick(func(x sample) float64 { return ms(x.wall) })
	mb, _, _ := b.pick(func(x sample) float64 { return ms(x.wall) })
	return ma / mb
}

func main() {
	var o options
	flag.IntVar(&o.n, "n", 21, "rounds per row (each round runs fullsend and its yardstick once)")
	flag.IntVar(&o.nScan, "n-scan", 5, "rounds for the scan row")
	flag.IntVar(&o.scanMB, "scan-mb", 50, "size of the generated markdown file for the scan row, in MB (10^6 bytes)")
	flag.IntVar(&o.nDD, "n-dd", 5, "rounds for the dd row")
	flag.IntVar(&o.ddMB, "dd-mb", 1024, "MiB the dd row writes")
	flag.IntVar(&o.nCold, "n-cold", 5, "runs (-count) of the cold resolution benchmark")
	flag.StringVar(&o.bin, "fullsend", "", "fullsend binary to measure (default: build ./cmd/fullsend)")
	flag.StringVar(&o.repo, "repo", ".", "fullsend source tree (for building and for examples/hello)")
	flag.StringVar(&o.corpus, "corpus", "", "the fullsend-ai/agents library for the code row (default: $FULLSEND_CORPUS, else ../shared/corpus/fullsend-agents beside -repo)")
	flag.BoolVar(&o.markdown, "markdown", false, "print the table as markdown (README's Performance section)")
	flag.StringVar(&o.only, "only", "", "comma list of rows to run: "+strings.Join(rowNames, ",")+" (default all)")
	flag.Parse()
	if err := mainErr(o); err != nil {
		fmt.Fprintln(os.Stderr, "fullsend-bench:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	n, nScan, scanMB        int
	nDD, ddMB, nCold        int
	bin, repo, corpus, only string
	markdown                bool
}

// rowNames lists the rows in the order they run and print.
var rowNames = []string{"version", "exec", "live", "scan", "resolve", "run", "starts", "dd", "cold", "code", "hooks", "size"}

// bench holds what every row needs: the binaries, the scratch tree and the
// rows measured so far.
type bench struct {
	options
	tmp, hello, ws string
	baseEnv        []string
	rows           []row
	// loadBefore and loadAfter are /proc/loadavg's 1, 5 and 15 minute
	// figures when the rows start and when they end.
	loadBefore, loadAfter string
}

func mainErr(o options) error {
	if o.n < 1 || o.nScan < 1 || o.scanMB < 1 || o.nDD < 1 || o.ddMB < 1 || o.nCold < 1 {
		return errors.New("-n, -n-scan, -scan-mb, -n-dd, -dd-mb and -n-cold must be at least 1")
	}
	want := map[string]bool{}
	for _, f := range strings.Split(o.only, ",") {
		if f = strings.TrimSpace(f); f != "" {
			if !slices.Contains(rowNames, f) {
				return fmt.Errorf("-only: unknown row %q (rows: %s)", f, strings.Join(rowNames, ","))
			}
			want[f] = true
		}
	}
	b, cleanup, err := newBench(o)
	if err != nil {
		return err
	}
	defer cleanup()
	steps := map[string]func() error{
		"version": b.version, "exec": b.exec, "scan": b.scan, "resolve": b.resolve,
		"run": b.run, "code": b.code, "hooks": b.hooks, "size": b.size,
		"live": b.live, "starts": b.starts, "dd": b.dd, "cold": b.cold,
	}
	b.loadBefore = loadAvg()
	for _, k := range rowNames {
		if len(want) == 0 || want[k] {
			if err := steps[k](); err != nil {
				return err
			}
		}
	}
	b.loadAfter = loadAvg()
	b.print()
	return nil
}

// newBench builds the binaries and lays out the scratch workspace.
func newBench(o options) (*bench, func(), error) {
	repo, err := filepath.Abs(o.repo)
	if err != nil {
		return nil, nil, err
	}
	o.repo = repo
	if _, err := os.Stat(filepath.Join(repo, "examples", "hello", "harness.yaml")); err != nil {
		return nil, nil, fmt.Errorf("-repo %s: not the fullsend source tree (%v)", repo, err)
	}
	tmp, err := os.MkdirTemp("", "fullsend-bench-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	b := &bench{options: o, tmp: tmp}
	if err := b.setup(); err != nil {
		cleanup()
		return nil, nil, err
	}
	return b, cleanup, nil
}

func (b *bench) setup() error {
	var err error
	if b.bin == "" {
		b.bin = filepath.Join(b.tmp, "fullsend")
		if err := goBuild(b.repo, b.bin, "./cmd/fullsend"); err != nil {
			return err
		}
	} else if b.bin, err = filepath.Abs(b.bin); err != nil {
		return err
	}
	b.hello = filepath.Join(b.tmp, "hello")
	if err := os.WriteFile(b.hello+".go", []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o600); err != nil {
		return err
	}
	if err := goBuild(b.tmp, b.hello, b.hello+".go"); err != nil {
		return err
	}
	// Keep fullsend's cache and run directories inside the temporary tree.
	b.ws = filepath.Join(b.tmp, "ws")
	if err := copyTree(filepath.Join(b.repo, "examples", "hello"), filepath.Join(b.ws, "hello")); err != nil {
		return err
	}
	b.baseEnv = []string{"FULLSEND_CACHE_DIR=" + filepath.Join(b.ws, ".fullsend-cache")}
	return nil
}

// fs is a fullsend command run in the scratch workspace.
func (b *bench) fs(args ...string) *cmdSpec {
	return &cmdSpec{args: append([]string{b.bin}, args...), dir: b.ws, env: b.baseEnv}
}

func (b *bench) add(r row) {
	b.rows = append(b.rows, r)
	fmt.Fprintf(os.Stderr, "%-40s %s\n", r.what, r.measured)
}

func (b *bench) fail(what string, err error) {
	b.add(row{what: what, measured: "error: " + oneLine(err.Error())})
}

func (b *bench) version() error {
	x, y, err := pair(b.n, job{cmds: []*cmdSpec{b.fs("version")}}, &job{cmds: []*cmdSpec{{args: []string{b.hello}}}})
	if err != nil {
		b.fail("`fullsend version`", err)
		return nil
	}
	b.add(row{"`fullsend version` vs a hello-world Go binary", "≤ 2× hello",
		fmt.Sprintf("%s vs %s = %.1f×; %s, %s", wallText(x), wallText(y), ratio(x, y), cpuText(x), rssText(x)),
		"`fullsend version` / `hello`"})
	return nil
}

func (b *bench) exec() error {
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		b.fail("`fullsend sandbox exec -- true`", errors.New("bwrap not installed (apt-get install -y bubblewrap)"))
		return nil
	}
	x, y, err := pair(b.n, job{cmds: []*cmdSpec{b.fs("sandbox", "exec", "--", "true")}},
		&job{cmds: []*cmdSpec{{args: append([]string{bw}, bwrapArgs(b.tmp)...)}}})
	if err != nil {
		b.fail("`fullsend sandbox exec -- true`", err)
		return nil
	}
	b.add(row{"`fullsend sandbox exec -- true` vs bubblewrap", "≤ 3× bwrap",
		fmt.Sprintf("%s vs %s = %.1f×; %s", wallText(x), wallText(y), ratio(x, y), cpuText(x)),
		"`fullsend sandbox exec -- true` / `bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL --ro-bind /usr /usr … --proc /proc --dev /dev --tmpfs /tmp true`"})
	return nil
}

func (b *bench) scan() error {
	file := filepath.Join(b.tmp, "scan", "big.md")
	if err := writeMarkdown(file, int64(b.scanMB)*1e6); err != nil {
		return err
	}
	c := b.fs("scan", file)
	c.env = append(c.env, "GOMAXPROCS=1")
	x, _, err := pair(b.nScan, job{cmds: []*cmdSpec{c}}, nil)
	if err != nil {
		b.fail("`fullsend scan`", err)
		return nil
	}
	mb := float64(b.scanMB)
	m, lo, hi := x.pick(func(s sample) float64 { return mb / s.wall.Seconds() })
	b.add(row{fmt.Sprintf("`fullsend scan` of %d MB of markdown, one core", b.scanMB), "≥ 100 MB/s, peak RSS ≤ 64 MiB",
		fmt.Sprintf("%.0f MB/s (%.0f–%.0f); %s; %s", m, lo, hi, wallText(x), rssText(x)),
		fmt.Sprintf("`GOMAXPROCS=1 fullsend scan big.md` (generated: %d MB)", b.scanMB)})
	return nil
}

func (b *bench) resolve() error {
	x, y, err := pair(b.n, job{cmds: []*cmdSpec{b.fs("resolve", "hello/harness.yaml")}}, &job{cmds: []*cmdSpec{{args: []string{b.hello}}}})
	if err != nil {
		b.fail("warm `fullsend resolve`", err)
		return nil
	}
	b.add(row{"warm `fullsend resolve` of examples/hello (all local, cached)", "≤ 50 ms",
		fmt.Sprintf("%s (%.1f× hello); %s", wallText(x), ratio(x, y), cpuText(x)),
		"`fullsend resolve hello/harness.yaml`"})
	return nil
}

func (b *bench) run() error {
	x, y, err := pair(b.n, job{cmds: []*cmdSpec{b.fs("run", "--target-repo", "none", "hello/harness.yaml")}}, &job{cmds: []*cmdSpec{b.helloInOneExec()}})
	if err != nil {
		b.fail("`fullsend run` examples/hello", err)
		return nil
	}
	b.add(row{"`fullsend run` of examples/hello (script runtime, local sandbox), whole process, vs the same agent commands in one `sandbox exec`", "≤ 200 ms; ≤ 1.5× one exec",
		fmt.Sprintf("%s vs %s = %.1f×; %s (own process and its children); %s", wallText(x), wallText(y), ratio(x, y), cpuText(x), rssText(x)),
		"`fullsend run --target-repo none hello/harness.yaml` / `fullsend sandbox exec --ro hello:/sandbox/hello -- sh -c 'cat …/SKILL.md; printf …; mkdir -p /sandbox/output; printf … >/sandbox/output/agent-result.json'`"})
	return nil
}

func (b *bench) hooks() error {
	pre := []byte(`{"session_id":"bench","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la src && grep -rn TODO src | head"}}`)
	post := []byte(`{"session_id":"bench","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls -la src"},"tool_response":{"stdout":"total 8\ndrwxr-xr-x 2 u u 4096 main.go\n","stderr":"","interrupted":false}}`)
	env := append(slices.Clip(b.baseEnv), "FULLSEND_CANARY_TOKEN=fullsend-canary-0123456789abcdef", "FULLSEND_TOOL_ALLOWLIST=Read,Grep,Bash")
	// As the claude runtime wires them: one `fullsend hook each` process
	// per event, running every hook of that event.
	cmds := []*cmdSpec{
		{args: []string{b.bin, "hook", "each", "bash-risk-pretool", "ssrf-pretool", "tool-allowlist-pretool", "canary-pretool", "--allow", "Read,Grep,Bash"}, dir: b.ws, env: env, stdin: pre},
		{args: []string{b.bin, "hook", "each", "canary-posttool", "secret-redact-posttool", "unicode-posttool", "context-suppress-posttool"}, dir: b.ws, env: env, stdin: post},
	}
	x, _, err := pair(b.n, job{cmds: cmds}, nil)
	if err != nil {
		b.fail("claude hooks per Bash call", err)
		return nil
	}
	m, _, _ := x.pick(func(s sample) float64 { return ms(s.wall) })
	b.add(row{"claude runtime hooks for one Bash tool call (PreToolUse + PostToolUse, 4 hooks each)", "≤ 15 ms per event",
		fmt.Sprintf("%.1f ms per event (%s for both); %s for both", m/2, wallText(x), cpuText(x)),
		"`fullsend hook each bash-risk-pretool ssrf-pretool tool-allowlist-pretool canary-pretool --allow …` then `fullsend hook each canary-posttool secret-redact-posttool unicode-posttool context-suppress-posttool`"})
	return nil
}

func (b *bench) size() error {
	st, err := os.Stat(b.bin)
	if err != nil {
		b.fail("binary size", err)
		return nil
	}
	b.add(row{"binary size", "≤ 12 MB", fmt.Sprintf("%.1f MB", float64(st.Size())/1e6), "`go build ./cmd/fullsend`"})
	return nil
}

func (b *bench) print() {
	load := fmt.Sprintf("load average (1, 5, 15 min): %s at the start, %s at the end, %d CPUs", b.loadBefore, b.loadAfter, runtime.NumCPU())
	if b.markdown {
		fmt.Printf("%s; %s\n\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), load)
		fmt.Println("| what (whole processes) | target | measured: median (min–max) | command |")
		fmt.Println("|---|---|---|---|")
		for _, r := range b.rows {
			fmt.Printf("| %s | %s | %s | %s |\n", r.what, r.target, r.measured, r.command)
		}
		return
	}
	fmt.Println(load)
	for _, r := range b.rows {
		fmt.Printf("%s\n  target:   %s\n  measured: %s\n  command:  %s\n", r.what, r.target, r.measured, r.command)
	}
}

func goBuild(dir, out string, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v: %s", pkg, err, oneLine(string(b)))
	}
	return nil
}

// bwrapArgs isolates `true` as the local backend does: every namespace,
// no capabilities, a read-only /usr, fresh /proc, /dev and /tmp, and a
// writable /sandbox.
func bwrapArgs(tmp string) []string {
	dir := filepath.Join(tmp, "bwrap-sandbox")
	_ = os.MkdirAll(dir, 0o700)
	args := []string{"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--uid", "1000", "--gid", "1000", "--hostname", "sandbox", "--ro-bind", "/usr", "/usr"}
	for _, l := range []string{"bin", "sbin", "lib", "lib64"} {
		if t, err := os.Readlink("/" + l); err == nil {
			args = append(args, "--symlink", t, "/"+l)
		} else if _, err := os.Stat("/" + l); err == nil {
			args = append(args, "--ro-bind", "/"+l, "/"+l)
		}
	}
	for _, f := range []string{"/etc/alternatives", "/etc/ld.so.cache"} {
		if _, err := os.Stat(f); err == nil {
			args = append(args, "--ro-bind", f, f)
		}
	}
	return append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--bind", dir, "/sandbox", "--chdir", "/sandbox", "true")
}

// writeMarkdown writes size bytes of plain, finding-free markdown: headings,
// prose paragraphs of varied words, lists and fenced code, from a fixed seed
// so every run scans the same bytes.
func writeMarkdown(path string, size int64) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	words := strings.Fields(`the agent reads each skill before it edits code and runs the tests
		a harness names its policy schema and scripts review findings carefully when
		build output changes keep commits small describe why not only what branch
		release notes module package function returns error value table row column`)
	r := rand.New(rand.NewPCG(1, 2))
	var written int64
	var b strings.Builder
	for section := 1; written < size; section++ {
		b.Reset()
		fmt.Fprintf(&b, "## Section %d\n\n", section)
		for p := 0; p < 3; p++ {
			for i, k := 0, 40+r.IntN(40); i < k; i++ {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[r.IntN(len(words))])
			}
			b.WriteString(".\n\n")
		}
		for i := 0; i < 4; i++ {
			fmt.Fprintf(&b, "- item %d: %s %s\n", i, words[r.IntN(len(words))], words[r.IntN(len(words))])
		}
		b.WriteString("\n```go\nfunc add(a, b int) int { return a + b }\n```\n\n")
		s := b.String()
		if rest := size - written; int64(len(s)) > rest {
			s = s[:rest]
		}
		k, err := w.WriteString(s)
		written += int64(k)
		if err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		t := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(t, 0o700)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(t, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
