package trust

import (
	"fmt"
	"strings"
)

// Policy is what a repository layer may do with a key.
type Policy int

// The policies of the layer table.
const (
	// Refused: org layer only; a repository layer setting it is an error.
	Refused Policy = iota
	// Allowed: a repository layer may set it (declarative, or it only
	// chooses among what the org already allows).
	Allowed
	// Narrow: a repository layer may replace it by a subset of the org's.
	Narrow
	// Lower: a repository layer may set a value at most the org's.
	Lower
	// Stricter: a repository layer may only make it stricter.
	Stricter
)

// String is the policy as the layer table shows it.
func (p Policy) String() string {
	switch p {
	case Allowed:
		return "yes"
	case Narrow:
		return "narrow only (a subset of the org's)"
	case Lower:
		return "lower only"
	case Stricter:
		return "stricter only"
	default:
		return "no (org only)"
	}
}

// Key is one row of the layer table: a config.yaml key (dotted path; it
// covers the keys below it unless a longer row names them), a harness
// field, or a file of the fullsend dir.
type Key struct {
	Key    string
	Policy Policy
	Why    string
}

// ConfigKeys is the layer table of config.yaml: what a repository layer's
// config.yaml may set. A key no row governs (features outside the runner,
// unknown keys, keys added later without a row) is org only.
var ConfigKeys = []Key{
	{"version", Allowed, "format version"},
	{"runtime", Allowed, "default runtime among the built-in ones"},
	{"agents", Allowed, "registers harnesses, themselves repository-layer files"},
	{"allowed_remote_resources", Narrow, "what may be fetched"},
	{"sandbox.backend", Refused, "the isolation the org chose"},
	{"sandbox.docker", Refused, "daemon, OCI runtime and image of the sandbox"},
	{"sandbox.kubernetes", Refused, "cluster, image, egress gateway and signing key"},
	{"sandbox.limits", Lower, "resource limits of every run"},
	{"sandbox.host_services", Refused, "host endpoints the sandbox reaches"},
	{"security.fail_mode", Stricter, "open only when the org says open"},
	{"security.allowed_env_names", Refused, "loader and interpreter variables of host scripts and the sandbox"},
	{"security.allow_disable", Refused, "whether a harness may set security.enabled: false"},
	{"security.remote_resources.allowed_domains", Narrow, "hosts fetched from"},
	{"security.remote_resources.allowed_private_networks", Refused, "private networks reachable by fetches and the sandbox"},
	{"security.remote_resources.trusted_harness_prefixes", Refused, "harness URLs run without confirmation"},
	{"security.remote_resources.timeout", Lower, "fetch bound"},
	{"security.remote_resources.max_size_bytes", Lower, "fetch bound"},
	{"security.remote_resources.max_depth", Lower, "fetch bound"},
	{"security.remote_resources.max_resources", Lower, "fetch bound"},
	{"security.scan", Refused, "scan policy"},
	{"security.llm_guard", Refused, "classifier endpoint and its credential"},
	{"forges", Refused, "forge API endpoints and token variables"},
	{"runtimes.claude.max_turns", Lower, "turn bound"},
	{"runtimes", Refused, "runtime binaries and modes run on the host"},
	{"cache", Refused, "cache registries and their credentials"},
}

// HarnessFields is the layer table of harness fields a harness from a
// repository layer may not set (every other field it may, under the rules
// all harnesses follow: allowed_remote_resources within the org's,
// resources only lower, security only stricter). A harness of the
// repository layer is checked after its base: chain is composed, so an
// org harness it extends lends it none of these.
var HarnessFields = []Key{
	{"pre_script", Refused, "a script run on the host"},
	{"post_script", Refused, "a script run on the host"},
	{"validation_loop.script", Refused, "a script run on the host"},
	{"validation_loop.preflight_check", Refused, "a command run on the host"},
	{"host_files", Refused, "host files copied into the sandbox"},
	{"env.runner", Refused, "environment of host scripts (also runner_env)"},
	{"env.sandbox ${VAR}", Refused, "host variables (secrets) copied into the sandbox"},
	{"native.tools", Refused, "host-side network tools of the native runtime"},
	{"absolute local paths", Refused, "host files outside the repository layer named by absolute path (agent, skills, policy, schema, …)"},
	{"security.sandbox_hooks false", Refused, "turns off a protection of the agent's session (true is allowed)"},
	{"security.enabled false", Refused, "turns the context scans advisory and the sandbox hooks off (true is allowed)"},
	{"security.escalation.on_critical review", Refused, "lets a run with a critical finding complete (halt is allowed)"},
	{"agent_input", Refused, "host files copied into the target repository the agent works on"},
}

// Files is the layer table of files of the fullsend dir with a meaning of
// their own.
var Files = []Key{
	{"scan-accept.yaml", Refused, "accepted scan findings; a repository layer's is not honoured (a warning says so)"},
}

// MarkdownTable renders the layer table as the Markdown rows SECURITY.md
// holds between its trust-layer-table markers.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| where | key | may a repository layer set it? | governs |\n|---|---|---|---|\n")
	for _, g := range []struct {
		where string
		keys  []Key
	}{{"config.yaml", ConfigKeys}, {"harness", HarnessFields}, {"file", Files}} {
		for _, k := range g.keys {
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", g.where, k.Key, k.Policy, k.Why)
		}
	}
	return b.String()
}

// configKey is the row of ConfigKeys governing the dotted key path, or
// false when none does.
func configKey(path string) (Key, bool) {
	best, found := Key{}, false
	for _, k := range ConfigKeys {
		if path == k.Key || strings.HasPrefix(path, k.Key+".") {
			if !found || len(k.Key) > len(best.Key) {
				best, found = k, true
			}
		}
	}
	return best, found
}
