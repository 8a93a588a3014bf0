//go:build linux

package guest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Descriptors of the pid1 role: 0-2 the command's stdio, fdStatus the
// status pipe to the supervisor, then the exec's cgroup.procs files.
const (
	fdStatus  = 3
	fdCgroups = 4
)

// envCgroups carries the number of the exec's cgroup descriptors to the
// pid1 role.
const envCgroups = "FULLSEND_SANDBOX_CGROUPS"

// runPid1 is pid 1 of an exec's own pid namespace. The supervisor starts it
// in new pid and mount namespaces with CAP_SYS_ADMIN (ambient, in the
// supervisor's user namespace, which owns nothing else). It mounts a /proc
// that shows only this namespace, drops every capability, applies the
// agent's Landlock and seccomp rules and RLIMIT_FSIZE to itself, starts the
// command (see startCommand) and reaps until the command exits. It then
// writes the command's status to the supervisor and exits, and the kernel
// kills whatever else is left in the namespace.
//
// Agents see this process as pid 1 and nothing above it: not the
// supervisor, not the sandbox init, not other execs. The kernel drops
// SIGKILL and SIGSTOP sent to a namespace's init from inside, and every
// other signal is caught here and ignored.
func runPid1() error {
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	runtime.GOMAXPROCS(1)
	var cfg SuperConfig
	if err := json.Unmarshal([]byte(os.Getenv(envSuper)), &cfg); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	// argv: the role name, then the command's resolved path and its
	// argv, or spareArg for a spare (see serveSpare).
	spare := len(os.Args) == 2 && os.Args[1] == spareArg
	nExec, err := strconv.Atoi(os.Getenv(envCgroups))
	if !spare && (err != nil || nExec < 0 || len(os.Args) < 3) {
		return fmt.Errorf("bad exec request")
	}
	os.Unsetenv(envSuper)
	os.Unsetenv(envCgroups)
	status := os.NewFile(fdStatus, "status")
	var execCG []*os.File
	for i := 0; !spare && i < nExec; i++ {
		execCG = append(execCG, os.NewFile(uintptr(fdCgroups+i), "cgroup.procs"))
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	// No descriptor above the command's stdio may reach it: ours (a
	// cgroup.procs file would let it move processes between groups, the
	// status pipe forge its exit status) nor any the fullsend process
	// inherited from its own parent without close-on-exec.
	if err := cloexecFrom(fdStatus); err != nil {
		return err
	}
	if err := dropCaps(); err != nil {
		return err
	}
	if err := hardenAgent(cfg); err != nil {
		return err
	}
	// Caught, not ignored: the command starts with default dispositions.
	// Nothing reads the channel (Notify drops what does not fit).
	signal.Notify(make(chan os.Signal, 1))
	if cfg.FSize > 0 {
		// Inherited by the command: no file it writes grows past the
		// workspace bound, and the write fails (EFBIG) instead of killing it.
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: cfg.FSize, Max: cfg.FSize}); err != nil {
			return fmt.Errorf("RLIMIT_FSIZE: %w", err)
		}
		signal.Ignore(syscall.SIGXFSZ)
	}
	var pid int
	if spare {
		pid, err = serveSpare(cfg)
	} else {
		pid, err = startCommand(cfg, execCG)
		CloseAll(execCG)
	}
	if err != nil {
		return err
	}
	// Reap every child (orphans of the command end up here) until the
	// command itself exits.
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("wait: %w", err)
		}
		if got != pid {
			continue
		}
		var line string
		if ws.Signaled() {
			line = "signal " + strconv.Itoa(int(ws.Signal()))
		} else {
			line = "exit " + strconv.Itoa(ws.ExitStatus())
		}
		status.WriteString(line)
		// Not os.Exit: nothing to flush, and a race-instrumented test
		// binary would linger a second in its exit hook.
		unix.Exit(0)
	}
}

// cloexecFrom marks every descriptor from first on close-on-exec.
func cloexecFrom(first int) error {
	if unix.CloseRange(uint(first), ^uint(0), unix.CLOSE_RANGE_CLOEXEC) == nil {
		return nil
	}
	// Before Linux 5.11: one by one.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("list descriptors: %w", err)
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= first {
			unix.CloseOnExec(fd)
		}
	}
	return nil
}

// startCommand starts the command (os.Args[1] is its resolved path,
// os.Args[2:] its argv) in its own session and returns its pid.
//
// The command must be in the exec's cgroups before it runs its first
// instruction, and this process must never be there: the agent can spend
// the groups' whole pids budget at any time (a fork bomb in another exec),
// and a Go process that cannot start a thread dies. So the command starts
// as the enter role, born here in the sandbox's own groups: it sets the
// command's rlimits, says it is ready and waits; this process moves it into
// the exec's groups by pid (a move is not a fork: a spent budget does not
// refuse it) and lets it go; it becomes the command.
func startCommand(cfg SuperConfig, execCG []*os.File) (int, error) {
	e, err := forkEnter(cfg, os.Args[1:], os.Environ(), nil)
	if err != nil {
		return 0, fmt.Errorf("start %s: %w", os.Args[2], err)
	}
	return e.place(os.Args[2], execCG)
}

// enterStep is a started enter role: its pid, the pipe that lets it go and
// the one on which it says it is ready.
type enterStep struct {
	pid         int
	goW, readyR *os.File
}

// forkEnter starts the enter role with args after its role name, env, and
// extra descriptors after its own (fdEnterGo, fdEnterReady).
func forkEnter(cfg SuperConfig, args, env []string, extra []uintptr) (*enterStep, error) {
	goR, goW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		goR.Close()
		goW.Close()
		return nil, err
	}
	env = append(append([]string(nil), env...), EnvRole+"=enter", fmt.Sprintf("%s=%d,%d,%d", envLimits, cfg.AS, cfg.Nproc, cfg.FSize))
	// syscall.ForkExec, not os.StartProcess: no pidfd (and none of the
	// start-up probing that comes with it); the caller reaps by pid.
	pid, err := syscall.ForkExec("/proc/self/exe", append([]string{"fullsend-sandbox-enter"}, args...), &syscall.ProcAttr{
		Env:   env,
		Files: append([]uintptr{0, 1, 2, goR.Fd(), readyW.Fd()}, extra...),
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	goR.Close()
	readyW.Close()
	if err != nil {
		goW.Close()
		readyR.Close()
		return nil, err
	}
	return &enterStep{pid: pid, goW: goW, readyR: readyR}, nil
}

// place waits until the enter step is ready, moves it into the exec's
// groups and lets it go; name is the command's, for errors.
func (e *enterStep) place(name string, execCG []*os.File) (int, error) {
	defer e.goW.Close()
	defer e.readyR.Close()
	if n, _ := e.readyR.Read(make([]byte, 1)); n != 1 {
		// It failed before it was ready and said why on stderr; its exit
		// status is the command's.
		return e.pid, nil
	}
	for _, f := range execCG {
		if _, err := f.WriteString(strconv.Itoa(e.pid)); err != nil {
			unix.Kill(e.pid, unix.SIGKILL)
			return 0, fmt.Errorf("move %s into the exec's cgroup: %w", name, err)
		}
	}
	if _, err := e.goW.Write([]byte{enterGo}); err != nil {
		return 0, fmt.Errorf("start %s: %w", name, err)
	}
	return e.pid, nil
}

// parseExitStatus reads the pid1 role's status line: the command's exit
// code, or 128+N when signal N killed it.
func parseExitStatus(s string) (int, bool) {
	var kind string
	var n int
	if _, err := fmt.Sscanf(s, "%s %d", &kind, &n); err != nil {
		return 0, false
	}
	switch kind {
	case "exit":
		return n, true
	case "signal":
		return 128 + n, true
	}
	return 0, false
}
