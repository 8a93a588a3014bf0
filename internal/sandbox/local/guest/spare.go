//go:build linux

package guest

import (
	"encoding/json"
	"errors"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A spare is an exec's pid 1 started ahead of the exec, so that an exec in
// a live session does not wait for two starts of the binary. It is started
// exactly like every pid 1 (new pid and mount namespaces, the same
// capabilities, parent-death signal and session) and prepares exactly the
// same way before any request: its own /proc, every capability dropped,
// Landlock, the ProfileAgent seccomp filter, RLIMIT_FSIZE. It then starts
// the exec's enter step, which waits too, in the sandbox's own groups, with
// nothing but /dev/null as stdio, no command and an empty environment.
//
// The exec's request (the command's resolved path, argv, environment and
// working directory, its stdio and the exec's cgroup.procs descriptors)
// reaches the pid 1 over a SOCK_SEQPACKET socket; it passes the command's
// part on to the enter step and continues as every pid 1 does: the enter
// step says it is ready, the pid 1 moves it into the exec's groups by pid,
// lets it go, and it becomes the command. Each spare serves one exec: the
// pid namespace stays the exec's own.
//
// The supervisor keeps at most one spare. It starts one at the first
// transfer (the sandbox's root is complete by then: the host sends requests
// only once the init is ready) and after every exec but the first of a
// session that had no transfer before it: a one-shot `sandbox exec` starts
// no spare it would not use.
const spareArg = "spare"

// Descriptors of a spare pid 1 after fdStatus: the request socket. A spare
// enter step gets its request socket after fdEnterReady.
const (
	fdSpareRequest = 4
	fdEnterRequest = 5
)

// spare is a waiting pid 1 as the supervisor holds it.
type spare struct {
	pid     int
	req     int      // the request socket
	statusR *os.File // its status pipe
}

// spares is the supervisor's (at most one) spare.
type spares struct {
	mu       sync.Mutex
	cur      *spare
	starting bool
	primed   bool // a request came: later execs are likely
}

// primeSpare notes a request and starts a spare unless it is the first
// request of the session and an exec (see spareArg).
func (s *supervisor) primeSpare(transfer bool) {
	s.sp.mu.Lock()
	primed := s.sp.primed
	s.sp.primed = true
	s.sp.mu.Unlock()
	if primed || transfer {
		s.ensureSpare()
	}
}

// ensureSpare starts a spare unless one is there or starting.
func (s *supervisor) ensureSpare() {
	s.sp.mu.Lock()
	if s.sp.cur != nil || s.sp.starting {
		s.sp.mu.Unlock()
		return
	}
	s.sp.starting = true
	s.sp.mu.Unlock()
	go func() {
		sp, err := forkSpare(s.cfg)
		s.sp.mu.Lock()
		s.sp.starting = false
		if err == nil {
			s.sp.cur = sp
		}
		s.sp.mu.Unlock()
	}()
}

// takeSpare returns the spare, if any, which is the caller's from then on.
func (s *supervisor) takeSpare() *spare {
	s.sp.mu.Lock()
	defer s.sp.mu.Unlock()
	sp := s.sp.cur
	s.sp.cur = nil
	return sp
}

// useSpare hands the exec request m (its command resolved to path) with
// files (stdio, then the exec's cgroup.procs descriptors) to a spare and
// returns its pid and status pipe, or ok false when there is none or it
// is gone (then the caller starts a pid 1 itself).
func (s *supervisor) useSpare(m Message, path string, files []*os.File) (pid int, statusR *os.File, ok bool) {
	sp := s.takeSpare()
	if sp == nil {
		return 0, nil, false
	}
	c := &conn{fd: sp.req}
	err := c.send(Message{Op: "exec", Args: append([]string{path}, m.Args...), Env: m.Env, Cwd: m.Cwd}, files...)
	unix.Close(sp.req)
	if err != nil {
		unix.Kill(sp.pid, unix.SIGKILL)
		go unix.Wait4(sp.pid, nil, 0, nil)
		sp.statusR.Close()
		return 0, nil, false
	}
	s.ensureSpare()
	return sp.pid, sp.statusR, true
}

// forkSpare starts a spare pid 1.
func forkSpare(cfg SuperConfig) (*spare, error) {
	null, err := os.OpenFile("/dev/null", os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer null.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, err
	}
	sc, _ := json.Marshal(cfg)
	n := null.Fd()
	pid, err := syscall.ForkExec(selfExe, []string{"fullsend-sandbox-pid1", spareArg}, &syscall.ProcAttr{
		Dir:   "/",
		Env:   append([]string{EnvRole + "=pid1", envSuper + "=" + string(sc)}, RaceEnv()...),
		Files: []uintptr{n, n, n, statusW.Fd(), uintptr(fds[1])},
		Sys:   pid1Attr(),
	})
	statusW.Close()
	unix.Close(fds[1])
	if err != nil {
		unix.Close(fds[0])
		statusR.Close()
		return nil, err
	}
	return &spare{pid: pid, req: fds[0], statusR: statusR}, nil
}

// serveSpare is the rest of a spare pid 1, prepared like every pid 1 by
// runPid1: it starts the enter step, waits for the exec's request, makes
// the command's stdio its own, passes the command on to the enter step and
// places it (see startCommand). It returns the command's pid.
func serveSpare(cfg SuperConfig) (int, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	e, err := forkEnter(cfg, []string{spareArg}, nil, []uintptr{uintptr(fds[1])})
	unix.Close(fds[1])
	if err != nil {
		unix.Close(fds[0])
		return 0, err
	}
	m, files, err := (&conn{fd: fdSpareRequest}).recv()
	unix.Close(fdSpareRequest)
	if err != nil {
		unix.Exit(0) // the supervisor is gone, or the session ends
	}
	defer CloseAll(files)
	if len(files) < 3 || len(m.Args) < 2 {
		unix.Kill(e.pid, unix.SIGKILL)
		return 0, errors.New("bad exec request")
	}
	// What this process says from now on goes to the command's stderr.
	for i := 0; i < 3; i++ {
		if err := unix.Dup3(int(files[i].Fd()), i, 0); err != nil {
			unix.Kill(e.pid, unix.SIGKILL)
			return 0, err
		}
	}
	err = (&conn{fd: fds[0]}).send(Message{Op: "exec", Args: m.Args, Env: m.Env, Cwd: m.Cwd}, files[:3]...)
	unix.Close(fds[0])
	if err != nil {
		unix.Kill(e.pid, unix.SIGKILL)
		return 0, err
	}
	return e.place(m.Args[1], files[3:])
}

// spareRequest is the enter step's wait in a spare: it receives the
// command (resolved path, argv, environment, working directory and stdio)
// from its pid 1 and makes the stdio and directory its own. It runs before
// the enter step is ready, in the sandbox's own groups.
func spareRequest() (path string, argv, env []string) {
	m, files, err := (&conn{fd: fdEnterRequest}).recv()
	unix.Close(fdEnterRequest)
	if err != nil {
		unix.Exit(126) // pid 1 is gone
	}
	if len(files) != 3 || len(m.Args) < 2 {
		enterFail(126, errors.New("bad exec request"))
	}
	for i, f := range files {
		if err := unix.Dup3(int(f.Fd()), i, 0); err != nil {
			enterFail(126, err)
		}
		f.Close()
	}
	if m.Cwd != "" {
		if err := unix.Chdir(m.Cwd); err != nil {
			// As when a pid 1 cannot start in it.
			code := 126
			if errors.Is(err, unix.ENOENT) {
				code = 127
			}
			enterFail(code, err)
		}
	}
	return m.Args[0], m.Args[1:], m.Env
}
