//go:build linux

package guest

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// runConfine is the confine role, the docker backend's wrapper around every
// command it runs in a container. argv: the binary, a pid file prefix PIDFILE, an
// RLIMIT_FSIZE value, the command. It creates the empty file "PIDFILE.PID"
// (PID: its own, the exec's session id) unless PIDFILE is empty, sets
// RLIMIT_FSIZE unless it is 0
// (with SIGXFSZ ignored, so writes past it fail with EFBIG), installs the
// ProfileSession seccomp filter (ProfileAgent, and no setsid: the exec's
// session holds everything it starts) on top of the container engine's
// (filters stack; the stricter answer wins), then becomes the command, looked up in
// $PATH. Without a command it exits 0 once all that is in place: a probe
// that the binary runs in the image. It exits 127 when the command does not
// exist and 126 when it cannot be executed or confined.
func runConfine() {
	if len(os.Args) < 3 {
		enterFail(126, fmt.Errorf("confine: usage: pidfile fsize command…"))
	}
	if f := os.Args[1]; f != "" {
		// Best effort: it only serves the in-container kill fallback.
		if w, err := os.OpenFile(fmt.Sprintf("%s.%d", f, os.Getpid()), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
			w.Close()
		}
	}
	fsize, err := strconv.ParseUint(os.Args[2], 10, 64)
	if err != nil {
		enterFail(126, fmt.Errorf("confine: file size limit %q", os.Args[2]))
	}
	if fsize > 0 {
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: fsize, Max: fsize}); err != nil {
			enterFail(126, fmt.Errorf("confine: RLIMIT_FSIZE: %w", err))
		}
		signal.Ignore(syscall.SIGXFSZ)
	}
	if err := loadSeccomp(ProfileSession); err != nil {
		enterFail(126, fmt.Errorf("confine: %w", err))
	}
	if len(os.Args) == 3 {
		os.Exit(0)
	}
	argv := os.Args[3:]
	path, err := exec.LookPath(argv[0])
	if err != nil {
		enterFail(127, fmt.Errorf("%s: command not found", argv[0]))
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, EnvRole+"=") {
			env = append(env, kv)
		}
	}
	err = unix.Exec(path, argv, env)
	code := 126
	if err == unix.ENOENT {
		code = 127
	}
	enterFail(code, fmt.Errorf("%s: %w", argv[0], err))
}
