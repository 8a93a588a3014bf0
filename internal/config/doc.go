// Package config owns the org configuration, <fullsend-dir>/config.yaml:
// the org allowlist of remote resource prefixes, the domain allowlist and
// private-network exemptions of the fetch layer, fetch limits, the fail mode
// and scan thresholds, the sandbox backend and the forges.
//
// # Compatibility
//
// Real fullsend config files load unchanged. Their keys that concern the
// runner are read; keys of fullsend features outside the runner (dispatch,
// repos, roles, create_issues, inference, …) are accepted and reported with a
// one-line notice. Any other unknown key is an error naming file, line and
// key inside security: and forges: (where a typo could silently weaken
// security) and a notice elsewhere.
//
// # Validation
//
// Every value is checked: prefixes are canonical https URLs ending in "/"
// (ref.CanonicalPrefix), allowed_domains entries are host patterns
// (netguard.CheckHostPattern), CIDRs parse, durations parse and are positive,
// limits are positive, fail_mode is closed or open, forge types are github or
// gitlab, API URLs are https, token_env values are environment variable
// names, and the remote context-injection scan cannot be turned off.
//
// # Trust rules owned here
//
// envrule.go is the one list of environment variable names a harness may
// not set (loader, shell and interpreter variables: RefusedEnvPatterns),
// and CheckEnvName the one check, which security.allowed_env_names can
// relax by exact name only. limits.go owns sandbox.limits (the org's
// resource limits for every run) and the parser a harness's resources:
// block shares, so that both accept the same keys and size units
// (ParseSize: bytes, K/M/G decimal, Ki/Mi/Gi binary).
//
// # Defaults
//
// A missing file is Default(): fail_mode closed, timeout 30s, 10 MiB, depth
// 10, 50 resources, sandbox.limits memory 4GiB, pids 1024, cpus 2, tmp_size
// 1GiB, workspace_size 10GiB, output_size 64MiB, output_files 10000, snapshot_size 1GiB, local ML threshold 0.92, remote 0.95, forges github.com
// (https://api.github.com, GITHUB_TOKEN) and gitlab.com
// (https://gitlab.com/api/v4, GITLAB_TOKEN). Forges listed in the file are
// added to the defaults; listing github.com or gitlab.com replaces that
// default.
//
// runtimes.go owns runtimes.claude (the Claude Code CLI the runner binds
// into the sandbox and its options) and sandbox.host_services (loopback
// endpoints of the runner host the sandbox reaches at the same address):
// org-only settings, since the first runs in every sandbox and the second
// opens the sandbox's network boundary.
//
// Errors are *yamlx.Error values ("file:line: field: reason").
package config
