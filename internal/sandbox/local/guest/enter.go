//go:build linux

package guest

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// envLimits carries "AS,NPROC,FSIZE" to the enter role.
const envLimits = "FULLSEND_SANDBOX_LIMITS"

// Descriptors of the enter role besides stdio: it waits on fdEnterGo for
// enterGo and announces on fdEnterReady that it is ready to wait.
const (
	fdEnterGo    = 3
	fdEnterReady = 4
	enterGo      = 'g'
)

// runEnter is the enter role, the start of every agent command (see
// startCommand). It sets the command's rlimits (RLIMIT_FSIZE bounds every
// file it writes, with SIGXFSZ ignored so that writes past it fail with
// EFBIG; RLIMIT_AS and RLIMIT_NPROC are the fallbacks when no cgroup bounds
// memory and tasks), tells pid 1 it is ready, waits while pid 1 moves it
// into the exec's cgroups, then becomes the command (argv[1] is its
// resolved path, argv[2:] its argv). It exits 127 when the command does not
// exist and 126 when it cannot be executed.
//
// Once moved, it may sit in groups whose pids budget the agent has spent,
// where the Go runtime cannot start a thread: from the announcement on, it
// makes only raw system calls (which never hand the processor to another
// thread), runs one processor, no garbage collection and no other
// goroutine, until the exec replaces it.
func runEnter() {
	runtime.GOMAXPROCS(1)
	debug.SetGCPercent(-1)
	var as, nproc, fsize uint64
	spare := len(os.Args) == 2 && os.Args[1] == spareArg
	if _, err := fmt.Sscanf(os.Getenv(envLimits), "%d,%d,%d", &as, &nproc, &fsize); err != nil || (len(os.Args) < 3 && !spare) {
		enterFail(126, fmt.Errorf("bad limits %q", os.Getenv(envLimits)))
	}
	var path string
	var argv, env []string
	if spare {
		path, argv, env = spareRequest()
	} else {
		path, argv = os.Args[1], os.Args[2:]
		env = make([]string, 0, len(os.Environ()))
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, envLimits+"=") && !strings.HasPrefix(kv, EnvRole+"=") {
				env = append(env, kv)
			}
		}
	}
	set := func(name string, res int, v uint64) {
		if v == 0 {
			return
		}
		if err := unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v}); err != nil {
			enterFail(126, fmt.Errorf("%s: %w", name, err))
		}
	}
	set("RLIMIT_NPROC", unix.RLIMIT_NPROC, nproc)
	set("RLIMIT_FSIZE", unix.RLIMIT_FSIZE, fsize)
	if fsize > 0 {
		signal.Ignore(syscall.SIGXFSZ)
	}
	set("RLIMIT_AS", unix.RLIMIT_AS, as)
	prefix := "fullsend sandbox: " + argv[0] + ": "
	b := []byte{enterGo}
	if _, _, e := unix.RawSyscall(unix.SYS_WRITE, fdEnterReady, uintptr(unsafe.Pointer(&b[0])), 1); e != 0 {
		unix.Exit(126)
	}
	unix.RawSyscall(unix.SYS_CLOSE, fdEnterReady, 0, 0)
	for {
		n, _, e := unix.RawSyscall(unix.SYS_READ, fdEnterGo, uintptr(unsafe.Pointer(&b[0])), 1)
		if e == unix.EINTR {
			continue
		}
		if e != 0 || n != 1 || b[0] != enterGo {
			unix.Exit(126) // pid 1 could not place it, or is gone
		}
		break
	}
	unix.RawSyscall(unix.SYS_CLOSE, fdEnterGo, 0, 0)
	err := unix.Exec(path, argv, env)
	code := 126
	if errors.Is(err, unix.ENOENT) {
		code = 127
	}
	msg := []byte(prefix + err.Error() + "\n")
	unix.RawSyscall(unix.SYS_WRITE, 2, uintptr(unsafe.Pointer(&msg[0])), uintptr(len(msg)))
	unix.Exit(code)
}

func enterFail(code int, err error) {
	fmt.Fprintf(os.Stderr, "fullsend sandbox: %v\n", err)
	os.Exit(code)
}
