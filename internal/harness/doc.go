// Package harness owns the harness model: decoding a harness YAML file
// strictly, composing base: chains and forge overlays, resolving local
// references against the fullsend dir (and its layers), and validating every
// rule a harness must satisfy before anything is fetched or run. It does no
// network I/O: remote bases come in through LoadOptions.FetchBase.
//
// # Decoding
//
// Parse accepts every field of real fullsend harnesses (agent, doc, model,
// image, policy, openshell.profiles, providers, role, slug, readonly_repo,
// host_files{src,dest,expand,optional}, pre_script, post_script, skills,
// plugins, validation_loop{script,schema,max_iterations},
// env{runner,sandbox}, timeout_minutes, forge.<name> overlays with any forge
// name) plus base, runtime, allowed_remote_resources, allow_runtime_fetch,
// max_runtime_fetches, security{fail_mode, host_scanners, sandbox_hooks,
// context_injection, trust_repo_settings (refused in remote content)} and native{subagent_profiles (default, read_only,
// web_fetch; default [default], [] for none), max_parallel_children (1-8,
// default 1)}; native is refused in forge overlays. Any other key is an
// error naming file, line and field.
//
// Fields of upstream fullsend's loader keep its meaning: runner_env is the
// older name of env.runner (same name checks, refused in remote content;
// a name set in both must agree); sandbox_timeout_seconds (0 or 30-600)
// bounds provisioning; validation_loop.preflight_check is a host command
// run before provisioning (refused in remote content, ErrRemotePreflight);
// effort is the claude runtime's --effort; security.host_scanners may be
// upstream's map (context_injection sets security.context_injection, a
// scanner turned off is recorded as host_scanners false, llm_guard is
// checked and ignored); a providers entry without "/" and without a
// .yaml/.yml suffix is a provider name (ProviderNames), not a file.
// api_servers is refused: it would let a harness open host endpoints to
// the sandbox, which only the org may (config.yaml sandbox.host_services).
//
// Today's upstream fields (docs/upstream-schema.md): description; trigger,
// a CEL bool expression over package event's Event, type-checked at load;
// agent_input, a local directory (executable-class: refused as a URL);
// validation_loop.feedback_mode (FeedbackModes); skills entries in object
// form {REF: {PATH: FILE|null}} (SkillOverrides, refused in remote
// content); security.enabled (false needs config.yaml
// security.allow_disable, checked by Validate; refused in remote content),
// security.escalation.{on_critical, review_label} (review refused in remote
// content) and security.trace.enabled. description, trigger and
// agent_input are refused in forge overlays.
//
// # Composition
//
// Load follows base: (a local path or a pinned, allowlisted URL; at most
// MaxBaseChain bases; a cycle is an error printing the cycle) and merges the
// chain with Merge: child scalars win, skills replace by basename, lists
// concatenate, host_files last-writer-wins per dest, env and forge merge per
// key, security and readonly_repo keep the stricter value, and the effective
// allowed_remote_resources is the union of the chain. References inside a
// remote base are resolved against its URL (RFC 3986) before merging, so its
// scripts become URLs and fail validation, and absolute local paths in it are
// rejected. Remote content may not name host environment variables: a
// ${VAR} in any reference (a host file source, a script) or env value of a
// remote harness fails with ErrRemoteExpansion, since it would let the
// remote author choose which host files or secrets reach the sandbox; the
// local harness that uses it as a base declares such entries. Remote
// content may not widen delegation either (ErrRemoteNative): its
// native.subagent_profiles may name only default and read_only (no more
// than the default child can do) and its max_parallel_children only 1; a
// local child harness may set more over it. ApplyForge
// merges one forge overlay the same way.
//
// LoadRemote does the same for a top-level harness given as a pinned URL:
// its bytes are re-checked against the pin (ErrDigestMismatch), its
// references are resolved against its URL exactly as a remote base's, its
// base: chain is followed and merged, and the result is validated at once.
// Its allowlist is the union of the chain's lists only: where the harness
// lives grants nothing. It has no local fullsend dir (ErrNoLocalDir).
//
// # Local references
//
// A relative reference resolves against Root (the fullsend dir) and then
// each of Layers, most specific first (seed 000 "Inheritance and
// Overrides": fullsend defaults → org .fullsend → per-repo .fullsend). The
// CLI sets Root to a repository layer and Layers to the org layer beneath
// it, and passes LoadOptions.Check = trust.CheckRepoHarness, so what the
// repository layer may not set is refused on the composed harness (package
// trust holds that rule). It may not escape the dir it is found in: ".." above it, symlinks with absolute
// targets and symlinks leading out are rejected (ErrEscapes). Absolute paths
// are used as-is. ${VAR} values (host_files src only) are expanded at run
// time and not checked here.
//
// The check is by name; what is read never is. OpenLocal opens a relative
// reference through an os.Root on the dir it was found in, so every path
// component is resolved again at the moment of use and a component swapped
// for a symlink leading out (or an absolute one) after the check fails
// with ErrEscapes instead of being followed. Check type-checks the opened
// handle, and consumers (package resolve) hash and parse from a Local, not
// from Resolve's path. Inside a directory (a skill) only regular files
// count: Local.Files skips symlinks, Local.ReadFile refuses them, and a
// skill whose SKILL.md is a symlink is rejected ("is a symlink"). Absolute
// references and host_files sources stay host paths opened as-is.
//
// # As written and materialized
//
// A Harness holds its references as written: load, validate, pin and
// vendor read and edit it. Package resolve returns a Materialized, the same
// settings with every reference replaced by a local path; the runner and
// the runtimes take that type. The two are distinct types, so one cannot
// be passed where the other is meant, and Materialized has none of the
// methods that read references as written (Refs, Resolve, Check, …).
//
// # Validation (Validate / Check)
//
//   - allowed_remote_resources entries are https URLs ending in "/" and each
//     is within the org list of config.yaml;
//   - allow_runtime_fetch / max_runtime_fetches need a non-empty
//     allowed_remote_resources; max_runtime_fetches >= 1;
//   - executable resources (pre_script, post_script, validation_loop.script,
//     host_files src) must be local;
//   - every URL reference is https, carries #sha256=<64 hex> and matches the
//     effective allowlist after canonicalisation (package ref);
//   - every local reference exists with the right type (skills and plugins
//     are directories, a skill holds SKILL.md), except optional host files;
//   - host_files dest values are clean absolute sandbox paths; env names are
//     valid; image digests are sha256:<64 hex>;
//   - native.tools names only known tools (NativeTools: web_fetch), checked
//     at parse time with the entry's line. It grants a capability, so like
//     env.runner it is refused in remote content (a remote harness or base:
//     ErrRemoteNativeTools) and inside forge overlays; local layers merge
//     by union.
//
// Errors are *yamlx.Error values, "file:line: field: reason", wrapping the
// sentinels of this package and of package ref.
package harness
