//go:build linux

package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// runSupervisor runs as the agent uid in a nested user namespace that owns
// nothing but itself, with CAP_SYS_ADMIN there and no capability anywhere
// else: enough to give each exec new pid and mount namespaces, nothing
// more. It is not dumpable, carries the ProfileSupervisor seccomp filter
// and is invisible to agent commands, which all run in pid namespaces below
// it (see runPid1). Each exec is one pid1 process; each upload or download
// one request to the session's archive helper, a process hardened like an
// agent command (see archiver).
//
// The init starts it while it still builds the sandbox's root and moves
// it into the sandbox's own cgroups (so that everything it starts is born
// there) before it tells the host that the sandbox is ready. The
// supervisor tells the host it is ready too, then serves requests, which
// the host sends once both are.
func runSupervisor() error {
	var cfg SuperConfig
	if err := json.Unmarshal([]byte(os.Getenv(envSuper)), &cfg); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	os.Unsetenv(envSuper)
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	// Nothing this process starts inherits a descriptor it did not pass
	// on purpose: not any the fullsend process got from
	// its own parent without close-on-exec.
	if err := cloexecFrom(fdCtl); err != nil {
		return err
	}
	// The ambient capability was only the way in; children that are not an
	// exec's pid 1 get none.
	if _, _, e := psx.Syscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("clear ambient capabilities: %w", e)
	}
	unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	if !cfg.NoHarden {
		if err := loadSeccomp(ProfileSupervisor); err != nil {
			return err
		}
	}
	ctl := &conn{fd: fdCtl}
	s := &supervisor{ctl: ctl, cfg: cfg, running: map[uint64]*running{}}
	if err := ctl.send(Message{Op: "ready"}); err != nil {
		os.Exit(0) // host gone
	}
	for {
		m, files, err := ctl.recv()
		if err != nil {
			os.Exit(0) // host or init gone
		}
		switch m.Op {
		case "exec":
			s.exec(m, files)
		case "kill":
			CloseAll(files)
			s.kill(m.ID)
		case "untar", "tar":
			go s.archive(m, files)
			// The root is complete: get the first exec a spare pid 1.
			s.primeSpare(true)
		default:
			CloseAll(files)
			s.reply(Message{Op: "exit", ID: m.ID, Exit: -1, Err: "unknown op " + m.Op})
		}
	}
}

// running is one exec's pid 1, a child of the supervisor, signalled by pid
// only until it has exited (its pid cannot be reused before it is reaped,
// which wait does once no signal can be sent any more).
type running struct {
	pid      int
	mu       sync.Mutex
	exited   bool
	timedOut bool
	killed   bool
}

func (r *running) kill(timeout bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if timeout {
		r.timedOut = true
	}
	r.killed = true
	if !r.exited {
		// pid 1 of the exec's namespace: the kernel takes everything in it down.
		unix.Kill(r.pid, unix.SIGKILL)
	}
}

// wait waits until the pid 1 has exited, stops signalling it, then reaps it.
func (r *running) wait() (unix.WaitStatus, error) {
	var info unix.Siginfo
	var err error = unix.EINTR
	for err == unix.EINTR {
		err = unix.Waitid(unix.P_PID, r.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
	}
	r.mu.Lock()
	r.exited = true
	r.mu.Unlock()
	var ws unix.WaitStatus
	if err != nil {
		return ws, fmt.Errorf("wait: %w", err)
	}
	err = unix.EINTR
	for err == unix.EINTR {
		_, err = unix.Wait4(r.pid, &ws, 0, nil)
	}
	if err != nil {
		return ws, fmt.Errorf("wait: %w", err)
	}
	return ws, nil
}

// describeStatus says how a process ended, the way os.ProcessState does.
func describeStatus(ws unix.WaitStatus) string {
	if ws.Signaled() {
		return "signal: " + ws.Signal().String()
	}
	return "exit status " + strconv.Itoa(ws.ExitStatus())
}

type supervisor struct {
	cfg     SuperConfig
	ctl     *conn
	mu      sync.Mutex
	running map[uint64]*running
	arch    archiver // the session's archive helper (archiver.go)
	sp      spares   // a pid 1 started ahead of the next exec (spare.go)
}

func (s *supervisor) reply(m Message) {
	s.ctl.send(m)
}

func envLookup(env []string, k string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], k+"="); ok {
			return v
		}
	}
	return ""
}

// lookPath resolves name against the request's PATH.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := envLookup(env, "PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: command not found", name)
}

// exec starts an exec's pid 1. files are the command's stdin, stdout and
// stderr, then the exec's cgroup.procs descriptors, into which the pid 1
// moves the command.
func (s *supervisor) exec(m Message, files []*os.File) {
	defer CloseAll(files)
	if len(files) < 3 || len(m.Args) == 0 {
		s.reply(Message{Op: "exit", ID: m.ID, Exit: -1, Err: "bad exec request"})
		return
	}
	startErr := func(code int, err error) {
		fmt.Fprintf(files[2], "fullsend sandbox: %v\n", err)
		s.reply(Message{Op: "exit", ID: m.ID, Exit: code})
	}
	path, err := lookPath(m.Args[0], m.Env)
	if err != nil {
		startErr(127, err)
		return
	}
	if pid, statusR, ok := s.useSpare(m, path, files); ok {
		s.track(m, pid, statusR)
		return
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		s.reply(Message{Op: "exit", ID: m.ID, Exit: -1, Err: err.Error()})
		return
	}
	sc, _ := json.Marshal(s.cfg)
	env := append(append([]string(nil), m.Env...), EnvRole+"=pid1", envSuper+"="+string(sc), fmt.Sprintf("%s=%d", envCgroups, len(files)-3))
	// 0-2 stdio, 3 status, then the exec's cgroup.procs files.
	fds := []uintptr{files[0].Fd(), files[1].Fd(), files[2].Fd(), statusW.Fd()}
	for _, f := range files[3:] {
		fds = append(fds, f.Fd())
	}
	// syscall.ForkExec, not os.StartProcess: no pidfd (see running), and
	// none of the probe forks that come with the first one.
	pid, err := syscall.ForkExec(selfExe, append([]string{"fullsend-sandbox-pid1", path}, m.Args...), &syscall.ProcAttr{
		Dir:   m.Cwd,
		Env:   env,
		Files: fds,
		Sys:   pid1Attr(),
	})
	statusW.Close()
	if err != nil {
		statusR.Close()
		code := 126
		if errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		startErr(code, err)
		return
	}
	s.track(m, pid, statusR)
	s.primeSpare(false)
}

// pid1Attr is how every exec's pid 1 starts: new pid and mount namespaces,
// CAP_SYS_ADMIN (of the supervisor's user namespace) to mount its /proc,
// its own session, killed with the supervisor.
func pid1Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWPID | syscall.CLONE_NEWNS,
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN},
		Setsid:      true,
		Pdeathsig:   syscall.SIGKILL,
	}
}

// track waits for the exec's pid 1, enforcing its timeout, and replies
// with the command's status read from statusR.
func (s *supervisor) track(m Message, pid int, statusR *os.File) {
	r := &running{pid: pid}
	s.mu.Lock()
	s.running[m.ID] = r
	s.mu.Unlock()
	var timer *time.Timer
	if m.TimeoutNS > 0 {
		timer = time.AfterFunc(time.Duration(m.TimeoutNS), func() { r.kill(true) })
	}
	go func() {
		st, werr := r.wait()
		if timer != nil {
			timer.Stop()
		}
		line, _ := io.ReadAll(io.LimitReader(statusR, 64))
		statusR.Close()
		s.mu.Lock()
		delete(s.running, m.ID)
		s.mu.Unlock()
		r.mu.Lock()
		to, killed := r.timedOut, r.killed
		r.mu.Unlock()
		out := Message{Op: "exit", ID: m.ID, TimedOut: to}
		code, ok := parseExitStatus(string(line))
		switch {
		case werr != nil:
			out.Exit, out.Err = -1, werr.Error()
		case to:
			out.Exit = -1
		case ok:
			out.Exit = code
		case killed:
			out.Exit = 128 + int(syscall.SIGKILL)
		default:
			// pid 1 failed before the command ran; it said why on stderr.
			out.Exit, out.Err = -1, "sandbox pid 1 failed: "+describeStatus(st)
		}
		s.reply(out)
	}()
}

func (s *supervisor) kill(id uint64) {
	s.mu.Lock()
	r := s.running[id]
	s.mu.Unlock()
	if r != nil {
		r.kill(false)
	}
}

// selfExe is the fullsend binary as every process in the sandbox sees it.
const selfExe = "/usr/local/bin/fullsend"
