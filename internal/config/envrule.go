package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// This file is the one place that decides which environment variable names
// a harness may set (env.runner and env.sandbox). A change here changes what
// a harness author can make the runner host or the sandbox execute: review it
// as a security change.

// ErrEnvRefused is returned for an env name that changes how a program or an
// interpreter loads code, unless the org config allows it by name.
var ErrEnvRefused = errors.New("changes how programs load code; refused unless config.yaml security.allowed_env_names lists it")

// ErrEnvReserved is returned for an env name under the FULLSEND_ prefix:
// fullsend sets those names itself (the output dir, the canary token, the
// tool allowlist its hooks read, …), and a harness that set one could
// redirect or silence a hook. security.allowed_env_names cannot lift it.
var ErrEnvReserved = errors.New("is reserved: the FULLSEND_ prefix belongs to fullsend (it sets these names itself, and its hooks read them); rename the variable")

// ReservedEnvPrefix is the prefix of the env names only fullsend sets.
const ReservedEnvPrefix = "FULLSEND_"

// reservedEnvExceptions are FULLSEND_ names a harness may still set: ones
// fullsend never sets nor reads. FULLSEND_FORGE is the upstream harnesses'
// way of telling an agent which forge overlay it runs under.
var reservedEnvExceptions = []string{"FULLSEND_FORGE"}

// RefusedEnvPatterns are the env names a harness may not set unless the org
// allows them by name. An entry ending in "*" matches every name with that
// prefix. Matching is exact for names and case-sensitive, except that the
// proxy variables are matched in both cases (curl reads http_proxy,
// most other programs HTTP_PROXY).
//
//   - dynamic loaders: LD_*, DYLD_*, GCONV_PATH, LOCPATH
//   - shells: BASH_ENV, ENV, BASH_FUNC_*, IFS, PATH
//   - interpreters: PYTHON*, PERL5*, PERLLIB, RUBY*, NODE_OPTIONS, NODE_PATH,
//     JAVA_TOOL_OPTIONS, _JAVA_OPTIONS
//   - git: GIT_* (it can name programs git runs: GIT_SSH, GIT_EXEC_PATH, …),
//     except GIT_AUTHOR_* and GIT_COMMITTER_*
//   - name resolution and TLS trust: HOSTALIASES, RES_OPTIONS, SSL_CERT_*
//   - proxies: *_PROXY and *_proxy (they redirect traffic around the egress
//     allowlist's intent)
var RefusedEnvPatterns = []string{
	"LD_*", "DYLD_*", "GCONV_PATH", "LOCPATH",
	"BASH_ENV", "ENV", "BASH_FUNC_*", "IFS", "PATH",
	"PYTHON*", "PERL5*", "PERLLIB", "RUBY*", "NODE_OPTIONS", "NODE_PATH",
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
	"GIT_*",
	"HOSTALIASES", "RES_OPTIONS", "SSL_CERT_*",
	"*_PROXY",
}

// allowedGitPrefixes are GIT_* names that only set identity metadata.
var allowedGitPrefixes = []string{"GIT_AUTHOR_", "GIT_COMMITTER_"}

// RefusedEnvPattern returns the entry of RefusedEnvPatterns that name
// matches, or "" when the name is not refused.
func RefusedEnvPattern(name string) string {
	for _, p := range allowedGitPrefixes {
		if strings.HasPrefix(name, p) {
			return ""
		}
	}
	upperSuffix := strings.HasSuffix(strings.ToUpper(name), "_PROXY")
	for _, p := range RefusedEnvPatterns {
		switch {
		case p == "*_PROXY":
			if upperSuffix && (strings.HasSuffix(name, "_PROXY") || strings.HasSuffix(name, "_proxy")) {
				return p
			}
		case strings.HasSuffix(p, "*"):
			if strings.HasPrefix(name, strings.TrimSuffix(p, "*")) {
				return p
			}
		case name == p:
			return p
		}
	}
	return ""
}

// CheckEnvName returns nil when a harness may set the env variable name:
// it is a valid name, not reserved to fullsend (the FULLSEND_ prefix; the
// error wraps ErrEnvReserved, whatever the org allows) and either not
// refused (RefusedEnvPattern) or listed in security.allowed_env_names (the
// error wraps ErrEnvRefused).
func (c *Config) CheckEnvName(name string) error {
	if !ValidEnvName(name) {
		return fmt.Errorf("%q is not an environment variable name", name)
	}
	if strings.HasPrefix(name, ReservedEnvPrefix) && !slices.Contains(reservedEnvExceptions, name) {
		return fmt.Errorf("%s %w", name, ErrEnvReserved)
	}
	p := RefusedEnvPattern(name)
	if p == "" || slices.Contains(c.Security.AllowedEnvNames, name) {
		return nil
	}
	if p == name {
		return fmt.Errorf("%s %w", name, ErrEnvRefused)
	}
	return fmt.Errorf("%s (matches %s) %w", name, p, ErrEnvRefused)
}
