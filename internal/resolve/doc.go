// Package resolve builds the dependency graph of a harness before anything
// runs (seed 000 "Dependency Graph and Resolution", "Transitive Closure",
// Phase 3 lock files): it loads the harness (local path or pinned URL),
// follows every reference to the full transitive closure, fetches what is
// remote exactly once, verifies every byte against its pin, scans remote
// content before it is cached, and returns the graph plus the harness with
// every reference replaced by a local path: a harness.Materialized
// (Result.Harness), a type of its own so that the compiler tells it from
// the harness as written (harness.Harness, Result.Loaded).
//
// # Edges
//
//   - harness → base chain (package harness composes it; remote bases come
//     through LoadOptions.FetchBase and are fetched here), agent, doc,
//     policy, openshell profiles, providers, skills, plugins,
//     validation_loop (schema, script), pre/post scripts and host files
//     (executable resources are local: package harness rejects URLs there);
//     when no forge overlay is applied, the references of every overlay
//     (field "forge.NAME.…") are resolved too, so a lock covers all forges;
//   - skill → dependencies: in its SKILL.md frontmatter;
//   - agent → skills: in its frontmatter. Only entries that look like a
//     reference (contain "/" or start with "https://") are followed; a bare
//     name such as "code-implementation" names a skill the harness or the
//     target repository provides and is not a reference;
//   - policy → top-level schema: / schemas: entries, if any.
//
// A dependency is a directory (a skill) unless it is a forge blob or raw
// URL, a non-forge URL, an existing local file, or a path whose last
// segment ends in .md, .yaml, .yml or .json (a single file, like the lock
// strawman's security-baseline.md).
//
// # Where relative references point
//
// Inside a remote resource, RFC 3986 against the resource's URL
// (ref.ResolveRef); the base of a skill's dependencies is the skill
// directory's URL with a trailing slash, so "../common/x" is a sibling of
// the skill and a bare "x" is inside it (DESIGN.md "References"; real
// fullsend uses the URL without the slash). Inside a local resource,
// against the fullsend dir and its layers with containment
// (harness.Harness.Resolve). A harness given as a URL is composed by
// harness.LoadRemote and has no local fullsend dir: its relative references
// are URLs too, so its scripts and host files become URLs and fail
// validation, and its location adds nothing to its allowlist.
//
// Local resources are hashed too: a file's sha256, a directory's tree hash
// over its regular files (symlinks are not followed and do not count). They
// are read once, through harness.OpenLocal (an os.Root on the fullsend dir
// or layer they were found in), never again by name: the bytes hashed are
// the bytes parsed for their references, and a path component swapped for
// a symlink leading out after validation fails the read (ErrEscapes).
//
// A directory reached through a forge blob or raw URL (as a relative
// reference from a harness served by a blob URL produces) is fetched as the
// tree at the same owner, repository, ref and path (forge.Location.As).
//
// # Rules for every remote edge
//
//  1. The canonical URL matches the harness's effective
//     allowed_remote_resources (ref.MatchPrefix), after dot segments are
//     removed, so "../../../../attacker-org/…" is rejected.
//  2. It carries #sha256=.
//  3. Cache first: a pin already in the cache (cas.Store.Get re-verifies)
//     needs no network at all.
//  4. Otherwise (and never with Offline) the shared registry tier is
//     asked first when config.yaml names one (cache.oci; package
//     ocicache, registry.go): a file as the blob whose digest is its pin,
//     a directory as the manifest tagged tree-<pin>. The registry is
//     untrusted storage: ocicache verifies every layer, every path and
//     the tree hash, and resolve checks the pin again (cas.TreeHash, the
//     one implementation). A miss goes on silently; refused content is a
//     warning naming the registry and the digest (Result.Warnings) and the
//     forge is asked (if that fails too, the error names both); an
//     unreachable registry is one warning and is not asked again. Registry
//     lookups run up to RegistryConcurrency at once, outside the
//     Concurrency bound that protects forges; a skill read from the
//     registry has the dependencies its SKILL.md pins (those the allowlist
//     admits) looked up at once, so they overlap with its scan and cache
//     write (the answers are checked when the walker reaches them, like
//     any other). Then a file is fetched with
//     fetch.Client.GetPinned, or forge FetchFile for a forge blob URL; a
//     directory only with forge FetchTree, whose cas.TreeHash must equal
//     the pin.
//  5. The content, from the registry as from the forge, is scanned
//     (remote origin policy) and blocked content is an error; only then is
//     it written to the cache. What came from the forge is then pushed to
//     the registry when cache.oci.push is set, in the background (at most
//     a few at a time); Resolve waits for the pushes before it returns,
//     and a failed push is a warning, never an error.
//  6. Every fetch and cache hit is appended to the audit log with the
//     resolution's trace id, fetch_type "static" (or "base_resource" for
//     what was reached through a remote base), allowed_by naming the
//     allowlist entry and source: "cache", "registry" or "forge" (the
//     reference's origin: its forge, or the https host of a plain file
//     URL).
//
// # Concurrency and limits
//
// Nodes are fetched concurrently, at most Options.Concurrency network
// fetches at a time (default DefaultConcurrency, the forge client's bound
// on requests in flight, forge.DefaultMaxInFlight, which is what protects
// a forge: a resolution never has more requests on a forge's wire). Work is deduplicated by
// node (canonical URL and pin, or local path) and by content hash, so a
// diamond fetches its shared dependency once. A dependency cycle is an
// error printing the cycle ("a -> b -> a"); a node deeper than max_depth
// or more than max_resources nodes (both from config.yaml; the harness
// itself and its base chain are not counted) is an error. The first error
// cancels everything else and is returned with the chain of references
// that led to it ("harness/x.yaml -> skills[1] https://… ->
// dependencies[0] https://…: reason").
//
// Options.Events (package progress) sees the work as it happens: a
// ResourceAdded per node when it joins the graph, a ResourceDone when it is
// materialised (CacheHit for the cache), and FetchStart/FetchEnd around
// each network fetch (bytes, files, duration, error).
//
// # One skill
//
// ResolveSkill runs the same walker from one pinned skill directory
// instead of a harness (package fetchsvc resolves a runtime-fetched
// skill's dependencies with it): the skill is the graph's root, checked
// like a harness skill (pin, SkillRequest.Allowed as the allowlist, forge
// tree, cache first, scan before cache); every rule above applies to its
// dependencies; max_depth counts from the skill (depth 0) and the skill
// is the first of max_resources. Audit entries carry the request's
// FetchType; with Audited, the skill's own cache hit is not audited again
// (its caller already audited it).
//
// # Top-level harness URLs
//
// A harness URL must be pinned and its host in allowed_domains. Outside
// security.remote_resources.trusted_harness_prefixes it is fetched and
// parsed, then Options.Confirm is asked with the list of domains it pulls
// from (seed 000 open question 1, option A); Yes confirms without asking;
// with neither, resolution fails before anything else is fetched.
//
// # Lock files
//
// With Options.Lock, every resolved hash is compared with the lock entry of
// the harness: a changed harness file or a dependency whose hash differs
// from (or is missing in) the lock is reported in Result.Warnings, naming
// the harness and the command that fixes it; with Frozen it is an error.
// LockEntry turns a Result into the lock entry `fullsend lock` writes.
//
// Tracing (package trace): Resolve is one "resolve" span with a
// "resolve.resource" child per remote resource obtained (canonical URL,
// sha256, type, bytes, source cache/registry/forge as in the audit log).
package resolve
