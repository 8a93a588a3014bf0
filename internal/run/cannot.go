package run

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/runtime/script"
)

// Runs that cannot succeed stop before anything is provisioned, with the
// reason (the CLI exits 2): a credential variable of env.sandbox that
// expands to empty, a script file that does not parse, a model endpoint
// nobody answers on.

// ErrCannotSucceed marks those refusals.
var ErrCannotSucceed = errors.New("the run cannot succeed")

// credentialSuffixes name the env.sandbox variables that carry credentials.
var credentialSuffixes = []string{"_API_KEY", "_TOKEN"}

// checkCredentialEnv refuses a plan whose env.sandbox gives a credential
// variable (…_API_KEY, …_TOKEN) a value that references runner variables
// and expands to empty: the agent would start without credentials and
// fail much later ("Not logged in").
func checkCredentialEnv(h *harness.Harness, p *Plan) error {
	if h == nil {
		return nil
	}
	keys := make([]string, 0, len(h.Env.Sandbox))
	for k := range h.Env.Sandbox {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := h.Env.Sandbox[k]
		if !slices.ContainsFunc(credentialSuffixes, func(s string) bool { return strings.HasSuffix(k, s) }) || !strings.Contains(v, "$") || p.SandboxEnv[k] != "" {
			continue
		}
		return &PlanError{Field: "env.sandbox." + k, Err: fmt.Errorf("%w: %s expands to empty on the runner, so the agent would start without this credential; export the variable it names before running, or remove %s from env.sandbox", ErrCannotSucceed, v, k)}
	}
	return nil
}

// checkScriptFile parses the script runtime's file before provisioning.
func checkScriptFile(path string) error {
	if _, err := script.Load(path); err != nil {
		return &PlanError{Field: "runtime", Err: fmt.Errorf("%w: script runtime: %v", ErrCannotSucceed, strings.TrimPrefix(err.Error(), "script "))}
	}
	return nil
}

// endpointDialTimeout bounds the reachability check of a model endpoint.
const endpointDialTimeout = 3 * time.Second

// checkEndpoint opens (and closes) a TCP connection to the host of base, a
// model endpoint URL configured explicitly; nothing is sent.
func checkEndpoint(base string) error {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not a URL", base)
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	c, err := net.DialTimeout("tcp", net.JoinHostPort(u.Hostname(), port), endpointDialTimeout)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			err = oe.Err
		}
		return err
	}
	return c.Close()
}
