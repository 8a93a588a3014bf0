// Package reexec is the one list of the roles the fullsend binary plays
// when fullsend itself re-executes it, inside or around a sandbox, each
// chosen by an environment variable:
//
//   - FULLSEND_SANDBOX_ROLE (guest.EnvRole): the local backend's init,
//     supervisor, per-exec pid 1, enter step, archive helper and user
//     namespace holder, and the docker backend's confine wrapper
//     (guest.Run);
//   - FULLSEND_SANDBOX_HOST_SERVICES (hostsvc.EnvServices): the in-sandbox
//     forwarder of the org's host services (hostsvc.Serve);
//   - FULLSEND_SANDBOX_FORWARD (docker.EnvForward): the docker backend's
//     in-container proxy forwarder (docker.Forward).
//
// Main is the first call of cmd/fullsend's main, before the CLI, and of the
// TestMain of every test binary whose tests start a local sandbox, a
// docker session or the host-services forwarder (those sandboxes run the
// test binary as /usr/local/bin/fullsend). The first variable of the list
// that is set (non-empty) is removed from the environment before its role
// runs, so nothing the role starts inherits it, and the process then exits
// with the role's status. An unknown FULLSEND_SANDBOX_ROLE fails (status
// 120); on other systems than Linux every sandbox role fails the same way.
package reexec

import (
	"os"

	"github.com/fullsend-ai/fullsend/internal/hostsvc"
	"github.com/fullsend-ai/fullsend/internal/sandbox/docker"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local/guest"
)

// role is one entry: the variable that selects it and the function that
// plays it given the variable's value, returning the exit status.
type role struct {
	env string
	run func(value string) int
}

// roles, in order of precedence: a sandbox role's command may itself be
// fullsend started as another role (the host-services forwarder runs as a
// command of the sandbox, so under the enter step), hence guest first.
var roles = []role{
	{guest.EnvRole, guest.Run},
	{hostsvc.EnvServices, hostsvc.Serve},
	{docker.EnvForward, docker.Forward},
}

// Main plays the role the environment selects and exits with its status;
// it returns when no role variable is set.
func Main() {
	if code, ok := dispatch(roles); ok {
		os.Exit(code)
	}
}

// dispatch runs the first role of list whose variable is set, after
// removing that variable from the environment.
func dispatch(list []role) (code int, handled bool) {
	for _, r := range list {
		v := os.Getenv(r.env)
		if v == "" {
			continue
		}
		os.Unsetenv(r.env)
		return r.run(v), true
	}
	return 0, false
}
