//go:build linux

package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Descriptors of the pid1 role: 0-2 the command's stdio, fdStatus the
// status pipe to the supervisor, then the exec's cgroup.procs files and
// after them the sandbox's own ones ("home": where pid1 was born).
const (
	fdStatus  = 3
	fdCgroups = 4
)

// envCgroups carries "NEXEC,NHOME", the number of exec and home cgroup
// descriptors, to the pid1 role.
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
	// argv: the role name, the command's resolved path, its argv.
	var nExec, nHome int
	if _, err := fmt.Sscanf(os.Getenv(envCgroups), "%d,%d", &nExec, &nHome); err != nil || nExec < 0 || nHome < 0 || len(os.Args) < 3 {
		return fmt.Errorf("bad exec request")
	}
	os.Unsetenv(envSuper)
	os.Unsetenv(envCgroups)
	status := os.NewFile(fdStatus, "status")
	execCG := fdRange(fdCgroups, nExec)
	homeCG := fdRange(fdCgroups+nExec, nHome)
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
	// Nothing reads the channel (Notify drops what does not fit): a
	// draining goroutine would be runnable while this process sits in the
	// agent's groups, and the runtime would start a thread for it there,
	// which a spent pids budget turns into a fatal pthread_create failure.
	signal.Notify(make(chan os.Signal, 1))
	if cfg.FSize > 0 {
		// Inherited by the command: no file it writes grows past the
		// workspace bound, and the write fails (EFBIG) instead of killing it.
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: cfg.FSize, Max: cfg.FSize}); err != nil {
			return fmt.Errorf("RLIMIT_FSIZE: %w", err)
		}
		signal.Ignore(syscall.SIGXFSZ)
	}
	// No garbage collection while this process may be in the agent's
	// groups: a cycle starts worker goroutines, and with them threads the
	// agent's pids budget may not allow (see above).
	gc := debug.SetGCPercent(-1)
	pid, err := startCommand(cfg, execCG, homeCG)
	debug.SetGCPercent(gc)
	for _, fd := range append(execCG, homeCG...) {
		unix.Close(fd)
	}
	if err != nil {
		var ce commandError
		if !errors.As(err, &ce) {
			return err
		}
		fmt.Fprintf(os.Stderr, "fullsend sandbox: %v\n", ce.err)
		status.WriteString("exit " + strconv.Itoa(ce.code))
		unix.Exit(0)
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

func fdRange(first, n int) []int {
	fds := make([]int, n)
	for i := range fds {
		fds[i] = first + i
	}
	return fds
}

// commandError is a command that could not be executed: exit code 127
// (not found) or 126, and the reason for its stderr.
type commandError struct {
	code int
	err  error
}

func (e commandError) Error() string { return e.err.Error() }

// startCommand starts the command (os.Args[1] is its resolved path,
// os.Args[2:] its argv) in its own session and returns its pid.
//
// The command must be in the exec's cgroups before it runs its first
// instruction, and this process must not stay there (its threads would
// count against the agent's pids, its memory against the agent's limit).
// When cgroups bound both pids and memory, this process joins the exec's
// groups, forks and execs the command — which is born there — and returns
// to its own groups: one process start per exec. Otherwise, or when the
// fork fails there (the agent's pids budget is spent, by a fork bomb in
// another exec, say), the command starts through the enter role, forked
// from here and joining the groups itself, which also sets the rlimits
// that stand in for missing controllers (RLIMIT_AS, RLIMIT_NPROC).
func startCommand(cfg SuperConfig, execCG, homeCG []int) (int, error) {
	if cfg.AS == 0 && cfg.Nproc == 0 {
		pid, err := forkInGroups(execCG, homeCG)
		if err == nil || !(errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.ENOMEM)) {
			return pid, err
		}
	}
	env := append(os.Environ(), EnvRole+"=enter", fmt.Sprintf("%s=%d,%d,%d,%d", envLimits, cfg.AS, cfg.Nproc, cfg.FSize, len(execCG)))
	fds := append([]uintptr{0, 1, 2}, uintptrs(execCG)...)
	// syscall.ForkExec, not os.StartProcess: no pidfd (and none of the
	// start-up probing that comes with it); the caller reaps by pid.
	pid, err := syscall.ForkExec("/proc/self/exe", append([]string{"fullsend-sandbox-enter"}, os.Args[1:]...), &syscall.ProcAttr{Env: env, Files: fds, Sys: &syscall.SysProcAttr{Setsid: true}})
	if err != nil {
		return 0, fmt.Errorf("start %s: %w", os.Args[2], err)
	}
	return pid, nil
}

func uintptrs(fds []int) []uintptr {
	out := make([]uintptr, len(fds))
	for i, fd := range fds {
		out[i] = uintptr(fd)
	}
	return out
}

// forkInGroups moves this process into the exec's groups (writing "0" to
// each cgroup.procs descriptor), forks and execs the command there, and
// moves this process back home. It returns the fork's error unwrapped
// (EAGAIN: the groups' pids limit is reached) and exec failures as a
// commandError.
func forkInGroups(execCG, homeCG []int) (int, error) {
	joined, err := joinCgroups(execCG)
	if err == nil {
		var pid int
		pid, err = syscall.ForkExec(os.Args[1], os.Args[2:], &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}, Sys: &syscall.SysProcAttr{Setsid: true}})
		if err == nil {
			if _, herr := joinCgroups(homeCG); herr != nil {
				unix.Kill(pid, unix.SIGKILL)
				return 0, fmt.Errorf("leave the exec's cgroups: %w", herr)
			}
			return pid, nil
		}
	}
	if joined > 0 {
		if _, herr := joinCgroups(homeCG); herr != nil {
			return 0, fmt.Errorf("leave the exec's cgroups: %w", herr)
		}
	}
	switch {
	case joined < len(execCG):
		return 0, fmt.Errorf("join cgroup: %w", err)
	case errors.Is(err, unix.ENOENT):
		return 0, commandError{127, fmt.Errorf("%s: %w", os.Args[2], err)}
	case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.ENOMEM):
		return 0, err
	}
	return 0, commandError{126, fmt.Errorf("%s: %w", os.Args[2], err)}
}

// joinCgroups moves this process into each group by writing "0" to its
// cgroup.procs descriptor; it returns how many it joined.
//
// The write is a raw system call: a cgroup move can wait for an RCU grace
// period (milliseconds), and a scheduler-visible call that long lets the
// runtime hand this thread's P to a new thread, which the agent's spent
// pids budget would make a fatal thread-creation failure once we are in
// its groups.
func joinCgroups(fds []int) (int, error) {
	zero := []byte("0")
	for i, fd := range fds {
		for {
			_, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&zero[0])), 1)
			if e == unix.EINTR {
				continue
			}
			if e != 0 {
				return i, e
			}
			break
		}
	}
	return len(fds), nil
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
