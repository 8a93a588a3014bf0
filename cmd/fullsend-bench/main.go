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
	label string
	cmds  []*cmdSpec
}

type cmdSpec struct {
	args  []string
	dir   string
	env   []string
	stdin []byte
	codes []int // accepted exit codes (default: 0)
}

func (c *cmdSpec) run() (sample, error) {
	cmd := exec.Command(c.args[0], c.args[1:]...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), c.env...)
	if c.stdin != nil {
		cmd.Stdin = bytes.NewReader(c.stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
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
		return sample{}, fmt.Errorf("%s exited %d: %s", strings.Join(c.args, " "), code, oneLine(out.String()))
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
	n := flag.Int("n", 21, "rounds per row (each round runs fullsend and its yardstick once)")
	nScan := flag.Int("n-scan", 5, "rounds for the scan row")
	scanMB := flag.Int("scan-mb", 50, "size of the generated markdown file for the scan row, in MB (10^6 bytes)")
	bin := flag.String("fullsend", "", "fullsend binary to measure (default: build ./cmd/fullsend)")
	repo := flag.String("repo", ".", "fullsend source tree (for building and for examples/hello)")
	md := flag.Bool("markdown", false, "print the table as markdown (README's Performance section)")
	only := flag.String("only", "", "comma list of rows to run: version,exec,scan,resolve,run,hooks,size (default all)")
	flag.Parse()
	if err := mainErr(*n, *nScan, *scanMB, *bin, *repo, *md, *only); err != nil {
		fmt.Fprintln(os.Stderr, "fullsend-bench:", err)
		os.Exit(1)
	}
}

func mainErr(n, nScan, scanMB int, bin, repo string, md bool, only string) error {
	if n < 1 || nScan < 1 || scanMB < 1 {
		return errors.New("-n, -n-scan and -scan-mb must be at least 1")
	}
	want := func(k string) bool {
		if only == "" {
			return true
		}
		for _, f := range strings.Split(only, ",") {
			if strings.TrimSpace(f) == k {
				return true
			}
		}
		return false
	}
	repo, err := filepath.Abs(repo)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(repo, "examples", "hello", "harness.yaml")); err != nil {
		return fmt.Errorf("-repo %s: not the fullsend source tree (%v)", repo, err)
	}
	tmp, err := os.MkdirTemp("", "fullsend-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	if bin == "" {
		bin = filepath.Join(tmp, "fullsend")
		if err := goBuild(repo, bin, "./cmd/fullsend"); err != nil {
			return err
		}
	} else if bin, err = filepath.Abs(bin); err != nil {
		return err
	}
	hello := filepath.Join(tmp, "hello")
	if err := os.WriteFile(hello+".go", []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o600); err != nil {
		return err
	}
	if err := goBuild(tmp, hello, hello+".go"); err != nil {
		return err
	}
	// Keep fullsend's cache and run directories inside the temporary tree.
	ws := filepath.Join(tmp, "ws")
	if err := copyTree(filepath.Join(repo, "examples", "hello"), filepath.Join(ws, "hello")); err != nil {
		return err
	}
	baseEnv := []string{"FULLSEND_CACHE_DIR=" + filepath.Join(ws, ".fullsend-cache")}
	fs := func(args ...string) *cmdSpec {
		return &cmdSpec{args: append([]string{bin}, args...), dir: ws, env: baseEnv}
	}

	var rows []row
	add := func(r row) {
		rows = append(rows, r)
		fmt.Fprintf(os.Stderr, "%-40s %s\n", r.what, r.measured)
	}
	fail := func(what string, err error) {
		add(row{what: what, measured: "error: " + oneLine(err.Error())})
	}

	if want("version") {
		a, b, err := pair(n, job{cmds: []*cmdSpec{fs("version")}}, &job{cmds: []*cmdSpec{{args: []string{hello}}}})
		if err != nil {
			fail("`fullsend version`", err)
		} else {
			add(row{"`fullsend version` vs a hello-world Go binary", "≤ 2× hello",
				fmt.Sprintf("%s vs %s = %.1f×; %s, %s", wallText(a), wallText(b), ratio(a, b), cpuText(a), rssText(a)),
				"`fullsend version` / `hello`"})
		}
	}
	if want("exec") {
		bw, lerr := exec.LookPath("bwrap")
		if lerr != nil {
			fail("`fullsend sandbox exec -- true`", errors.New("bwrap not installed (apt-get install -y bubblewrap)"))
		} else {
			a, b, err := pair(n, job{cmds: []*cmdSpec{fs("sandbox", "exec", "--", "true")}},
				&job{cmds: []*cmdSpec{{args: append([]string{bw}, bwrapArgs(tmp)...)}}})
			if err != nil {
				fail("`fullsend sandbox exec -- true`", err)
			} else {
				add(row{"`fullsend sandbox exec -- true` vs bubblewrap", "≤ 3× bwrap",
					fmt.Sprintf("%s vs %s = %.1f×; %s", wallText(a), wallText(b), ratio(a, b), cpuText(a)),
					"`fullsend sandbox exec -- true` / `bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL --ro-bind /usr /usr … --proc /proc --dev /dev --tmpfs /tmp true`"})
			}
		}
	}
	if want("scan") {
		file := filepath.Join(tmp, "scan", "big.md")
		if err := writeMarkdown(file, int64(scanMB)*1e6); err != nil {
			return err
		}
		c := fs("scan", file)
		c.env = append(c.env, "GOMAXPROCS=1")
		a, _, err := pair(nScan, job{cmds: []*cmdSpec{c}}, nil)
		if err != nil {
			fail("`fullsend scan`", err)
		} else {
			m, lo, hi := a.pick(func(x sample) float64 { return float64(scanMB) / x.wall.Seconds() })
			add(row{fmt.Sprintf("`fullsend scan` of %d MB of markdown, one core", scanMB), "≥ 100 MB/s, peak RSS ≤ 64 MiB",
				fmt.Sprintf("%.0f MB/s (%.0f–%.0f); %s; %s", m, lo, hi, wallText(a), rssText(a)),
				fmt.Sprintf("`GOMAXPROCS=1 fullsend scan big.md` (generated: %d MB)", scanMB)})
		}
	}
	if want("resolve") {
		a, b, err := pair(n, job{cmds: []*cmdSpec{fs("resolve", "hello/harness.yaml")}}, &job{cmds: []*cmdSpec{{args: []string{hello}}}})
		if err != nil {
			fail("warm `fullsend resolve`", err)
		} else {
			add(row{"warm `fullsend resolve` of examples/hello (all local, cached)", "≤ 50 ms",
				fmt.Sprintf("%s (%.1f× hello); %s", wallText(a), ratio(a, b), cpuText(a)),
				"`fullsend resolve hello/harness.yaml`"})
		}
	}
	if want("run") {
		a, _, err := pair(n, job{cmds: []*cmdSpec{fs("run", "--target-repo", "none", "hello/harness.yaml")}}, nil)
		if err != nil {
			fail("`fullsend run` examples/hello", err)
		} else {
			add(row{"`fullsend run` of examples/hello (script runtime, local sandbox), whole process", "≤ 200 ms",
				fmt.Sprintf("%s; %s (own process and its children); %s", wallText(a), cpuText(a), rssText(a)),
				"`fullsend run --target-repo none hello/harness.yaml`"})
		}
	}
	if want("hooks") {
		pre := []byte(`{"session_id":"bench","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la src && grep -rn TODO src | head"}}`)
		post := []byte(`{"session_id":"bench","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls -la src"},"tool_response":{"stdout":"total 8\ndrwxr-xr-x 2 u u 4096 main.go\n","stderr":"","interrupted":false}}`)
		env := append(baseEnv, "FULLSEND_CANARY_TOKEN=fullsend-canary-0123456789abcdef", "FULLSEND_TOOL_ALLOWLIST=Read,Grep,Bash")
		// As the claude runtime wires them: one `fullsend hook each` process
		// per event, running every hook of that event.
		cmds := []*cmdSpec{
			{args: []string{bin, "hook", "each", "bash-risk-pretool", "ssrf-pretool", "tool-allowlist-pretool", "canary-pretool", "--allow", "Read,Grep,Bash"}, dir: ws, env: env, stdin: pre},
			{args: []string{bin, "hook", "each", "canary-posttool", "secret-redact-posttool", "unicode-posttool", "context-suppress-posttool"}, dir: ws, env: env, stdin: post},
		}
		a, _, err := pair(n, job{cmds: cmds}, nil)
		if err != nil {
			fail("claude hooks per Bash call", err)
		} else {
			m, _, _ := a.pick(func(x sample) float64 { return ms(x.wall) })
			add(row{"claude runtime hooks for one Bash tool call (PreToolUse + PostToolUse, 4 hooks each)", "≤ 15 ms per event",
				fmt.Sprintf("%.1f ms per event (%s for both); %s for both", m/2, wallText(a), cpuText(a)),
				"`fullsend hook each bash-risk-pretool ssrf-pretool tool-allowlist-pretool canary-pretool --allow …` then `fullsend hook each canary-posttool secret-redact-posttool unicode-posttool context-suppress-posttool`"})
		}
	}
	if want("size") {
		st, err := os.Stat(bin)
		if err != nil {
			fail("binary size", err)
		} else {
			add(row{"binary size", "≤ 12 MB", fmt.Sprintf("%.1f MB", float64(st.Size())/1e6), "`go build ./cmd/fullsend`"})
		}
	}

	if md {
		fmt.Println("| what (whole processes) | target | measured: median (min–max) | command |")
		fmt.Println("|---|---|---|---|")
		for _, r := range rows {
			fmt.Printf("| %s | %s | %s | %s |\n", r.what, r.target, r.measured, r.command)
		}
		return nil
	}
	for _, r := range rows {
		fmt.Printf("%s\n  target:   %s\n  measured: %s\n  command:  %s\n", r.what, r.target, r.measured, r.command)
	}
	return nil
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
