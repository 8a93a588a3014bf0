package run

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// Runs that cannot succeed stop before anything is provisioned, with the
// reason (the CLI exits 2): a credential variable of env.sandbox that
// expands to empty; the runtimes refuse their own (a script file that
// does not parse, a model endpoint nobody answers on).

// ErrCannotSucceed marks those refusals (runtimes use the same).
var ErrCannotSucceed = runtime.ErrCannotSucceed

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
