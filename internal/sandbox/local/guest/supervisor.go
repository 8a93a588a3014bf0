package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fullsend-ai/fullsend/internal/sandbox/internal/archive"
)

// runSupervisor runs as the unprivileged agent uid in a nested user
// namespace (no capabilities anywhere). It locks itself down once (rlimits,
// no_new_privs, Landlock, seccomp) and then starts every exec'd command, each
// in its own session; all descendants inherit the restrictions.
func runSupervisor() error {
	var cfg SuperConfig
	if err := json.Unmarshal([]byte(os.Getenv(envSuper)), &cfg); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	os.Unsetenv(envSuper)
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	ctl := &conn{fd: fdCtl}
	if err := harden(cfg); err != nil {
		return err
	}
	s := &supervisor{ctl: ctl, cfg: cfg, running: map[uint64]*running{}}
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
		default:
			CloseAll(files)
			s.reply(Message{Op: "exit", ID: m.ID, Exit: -1, Err: "unknown op " + m.Op})
		}
	}
}

type running struct {
	pid      int
	timedOut bool
	mu       sync.Mutex
}

type supervisor struct {
	cfg     SuperConfig
	ctl     *conn
	wmu     sync.Mutex
	mu      sync.Mutex
	running map[uint64]*running
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

func (s *supervisor) exec(m Message, files []*os.File) {
	defer CloseAll(files)
	if len(files) != 3 || len(m.Args) == 0 {
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
	argv, env := m.Args, m.Env
	if s.cfg.AS > 0 || s.cfg.Nproc > 0 {
		// Fallback limits: re-execute ourselves in the "limit" role, which
		// sets them and becomes the command.
		argv = append([]string{"fullsend-sandbox-limit", path}, m.Args...)
		env = append(append([]string(nil), m.Env...), EnvRole+"=limit", fmt.Sprintf("%s=%d,%d", envLimits, s.cfg.AS, s.cfg.Nproc))
		path = "/proc/self/exe"
	}
	p, err := os.StartProcess(path, argv, &os.ProcAttr{
		Dir:   m.Cwd,
		Env:   env,
		Files: files,
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		code := 126
		if errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		startErr(code, err)
		return
	}
	r := &running{pid: p.Pid}
	s.mu.Lock()
	s.running[m.ID] = r
	s.mu.Unlock()
	var timer *time.Timer
	if m.TimeoutNS > 0 {
		timer = time.AfterFunc(time.Duration(m.TimeoutNS), func() {
			r.mu.Lock()
			r.timedOut = true
			r.mu.Unlock()
			killSession(r.pid)
		})
	}
	go func() {
		st, err := p.Wait()
		if timer != nil {
			timer.Stop()
		}
		// Whatever the command left running in its session dies with it.
		killSession(r.pid)
		s.mu.Lock()
		delete(s.running, m.ID)
		s.mu.Unlock()
		r.mu.Lock()
		to := r.timedOut
		r.mu.Unlock()
		out := Message{Op: "exit", ID: m.ID, TimedOut: to}
		switch {
		case err != nil:
			out.Exit, out.Err = -1, err.Error()
		case to:
			out.Exit = -1
		default:
			ws := st.Sys().(syscall.WaitStatus)
			if ws.Signaled() {
				out.Exit = 128 + int(ws.Signal())
			} else {
				out.Exit = ws.ExitStatus()
			}
		}
		s.reply(out)
	}()
}

func (s *supervisor) kill(id uint64) {
	s.mu.Lock()
	r := s.running[id]
	s.mu.Unlock()
	if r != nil {
		killSession(r.pid)
	}
}

// killSession kills every live process whose session id is sid, until none
// is left (a process that forks while we scan is caught by the next pass).
func killSession(sid int) {
	syscall.Kill(-sid, syscall.SIGKILL)
	for pass := 0; pass < 100; pass++ {
		found := false
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
			if err != nil {
				continue
			}
			i := strings.LastIndexByte(string(b), ')')
			if i < 0 {
				continue
			}
			f := strings.Fields(string(b[i+1:]))
			if len(f) < 5 || f[0] == "Z" || f[0] == "X" {
				continue
			}
			if f[3] == strconv.Itoa(sid) {
				syscall.Kill(pid, syscall.SIGKILL)
				found = true
			}
		}
		if !found {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (s *supervisor) archive(m Message, files []*os.File) {
	defer CloseAll(files)
	out := Message{Op: "exit", ID: m.ID}
	if len(files) != 1 {
		out.Exit, out.Err = -1, "bad archive request"
		s.reply(out)
		return
	}
	var err error
	if m.Op == "untar" {
		err = archive.Extract(files[0], m.Path, -1, -1)
	} else {
		err = archive.Write(files[0], m.Path)
	}
	files[0].Close()
	if err != nil {
		out.Exit, out.Err = 1, err.Error()
	}
	s.reply(out)
}
