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

// envCgroups carries the number of cgroup descriptors to the pid1 role.
const envCgroups = "FULLSEND_SANDBOX_CGROUPS"

// runPid1 is pid 1 of an exec's own pid namespace. The supervisor starts it
// in new pid and mount namespaces with CAP_SYS_ADMIN (ambient, in the
// supervisor's user namespace, which owns nothing else). It mounts a /proc
// that shows only this namespace, drops every capability, applies the
// agent's Landlock and seccomp rules to itself, starts the command (through
// the enter role) and reaps until the command exits. It then writes the
// command's status to the supervisor and exits, and the kernel kills
// whatever else is left in the namespace.
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
	ncg, err := strconv.Atoi(os.Getenv(envCgroups))
	if err != nil || len(os.Args) < 3 {
		return fmt.Errorf("bad exec request")
	}
	os.Unsetenv(envSuper)
	os.Unsetenv(envCgroups)
	status := os.NewFile(fdStatus, "status")
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := dropCaps(); err != nil {
		return err
	}
	if err := hardenAgent(cfg); err != nil {
		return err
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs)
	go func() {
		for range sigs {
		}
	}()
	fds := []uintptr{0, 1, 2}
	for i := 0; i < ncg; i++ {
		fds = append(fds, uintptr(fdCgroups+i))
	}
	env := append(os.Environ(), EnvRole+"=enter", fmt.Sprintf("%s=%d,%d,%d,%d", envLimits, cfg.AS, cfg.Nproc, cfg.FSize, ncg))
	// syscall.ForkExec, not os.StartProcess: no pidfd (and none of the
	// start-up probing that comes with it); the loop below reaps by pid.
	pid, err := syscall.ForkExec("/proc/self/exe", append([]string{"fullsend-sandbox-enter"}, os.Args[1:]...), &syscall.ProcAttr{Env: env, Files: fds, Sys: &syscall.SysProcAttr{Setsid: true}})
	if err != nil {
		return fmt.Errorf("start %s: %w", os.Args[1], err)
	}
	for i := 0; i < ncg; i++ {
		unix.Close(fdCgroups + i)
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
