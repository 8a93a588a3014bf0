//go:build linux

package guest

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// envLimits carries "AS,NPROC,FSIZE,NCGROUPS" to the enter role.
const envLimits = "FULLSEND_SANDBOX_LIMITS"

// runEnter is the enter role, the fallback start of an agent command (see
// startCommand): it moves itself into the exec's cgroups (writing "0" to
// each cgroup.procs descriptor from fd 3 on, so everything it becomes is
// counted there),
// sets the command's rlimits (RLIMIT_FSIZE bounds every file it writes,
// with SIGXFSZ ignored so that writes past it fail with EFBIG; RLIMIT_AS
// and RLIMIT_NPROC are the fallbacks when no cgroup bounds memory and
// tasks), then becomes the command (argv[1] is its resolved path, argv[2:]
// its argv). It exits 127 when the command does not exist and 126 when it
// cannot be executed.
func runEnter() {
	var as, nproc, fsize uint64
	var ncg int
	if _, err := fmt.Sscanf(os.Getenv(envLimits), "%d,%d,%d,%d", &as, &nproc, &fsize, &ncg); err != nil || len(os.Args) < 3 {
		enterFail(126, fmt.Errorf("bad limits %q", os.Getenv(envLimits)))
	}
	for i := 0; i < ncg; i++ {
		f := os.NewFile(uintptr(3+i), "cgroup")
		_, err := f.WriteString("0")
		f.Close()
		if err != nil {
			enterFail(126, fmt.Errorf("join cgroup: %w", err))
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
	set("RLIMIT_AS", unix.RLIMIT_AS, as)
	set("RLIMIT_NPROC", unix.RLIMIT_NPROC, nproc)
	set("RLIMIT_FSIZE", unix.RLIMIT_FSIZE, fsize)
	if fsize > 0 {
		signal.Ignore(syscall.SIGXFSZ)
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envLimits+"=") {
			env = append(env, kv)
		}
	}
	err := unix.Exec(os.Args[1], os.Args[2:], env)
	code := 126
	if errors.Is(err, unix.ENOENT) {
		code = 127
	}
	enterFail(code, fmt.Errorf("%s: %w", os.Args[2], err))
}

func enterFail(code int, err error) {
	fmt.Fprintf(os.Stderr, "fullsend sandbox: %v\n", err)
	os.Exit(code)
}
