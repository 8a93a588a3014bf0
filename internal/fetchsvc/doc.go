// Package fetchsvc is the runner side of runtime dependency loading (seed
// 001, DESIGN.md "Runtime fetch"): a per-run HTTP service an agent asks,
// through `fullsend fetch-skill URL` inside its sandbox, for one more skill
// directory mid-run. It owns the protocol, the run's bearer token and
// fetch budget, and the placement of fetched skills in the sandbox; every
// rule about what may be fetched belongs to other packages and is called,
// not repeated: ref (URL syntax, canonical form, pins, prefix match), forge
// (which URLs are forge directories, the download), cas (tree hash, cache),
// scan (remote policy), resolve (a skill's dependencies:), audit.
//
// # Life cycle
//
// StartIfAllowed starts a Server only for a harness with
// allow_runtime_fetch: true; otherwise it returns nil and nothing listens
// (a nil *Server is inert). The server listens on 127.0.0.1 with a port
// chosen by the kernel, never on a wildcard address, without TCP
// keep-alive probes (the peer is on this host; read and idle timeouts
// bound idle connections). Its Services go into
// the sandbox spec's Network.Services, so the sandbox's egress proxy (its
// only way out) admits that one runner endpoint; SandboxEnv gives the
// sandbox FULLSEND_FETCH_URL and FULLSEND_FETCH_TOKEN, through the
// environment only. Once the sandbox exists, Attach names it (the upload
// target) and the skill names it already holds. Close ends the service;
// in-flight requests are cancelled.
//
// # Protocol
//
// POST /v1/fetch-skill with header "Authorization: Bearer TOKEN" and body
// {"url": "https://FORGE/OWNER/REPO/tree/REF/PATH#sha256=TREEHASH"}.
// Success is 200 with {"path": "/sandbox/claude-config/skills/NAME",
// "name", "url", "sha256", "cache_hit", "dependencies": [{name, path, url,
// sha256}], "remaining"}. Failure is {"error": {"code", "message"}} with:
//
//	401 unauthorized      missing or wrong token (checked first: no body read, no budget, no fetch, no audit)
//	400 bad_request       body is not one {"url": "…"} object (≤ MaxRequestBytes)
//	400 bad_url           not a valid https / forge URL; not_directory: a forge blob or raw URL
//	403 missing_hash      no #sha256= pin
//	403 not_allowed       outside the harness's allowed_remote_resources (after dot segments are removed)
//	403 not_forge         an https URL on no configured forge: skills are directories, HTTP has no listing
//	409 name_conflict     the skill's name is taken in the sandbox (a static skill, or another fetched tree)
//	422 hash_mismatch     the tree (or a git blob) does not match its pin; nothing is cached
//	422 scan_blocked      the security scan (remote policy) blocked it; nothing is cached
//	422 bad_skill / dependency   no SKILL.md, unsafe paths, bad name; dependency cycle, depth or count limit
//	429 budget_exhausted  max_runtime_fetches reached
//	502 upstream          the forge could not be reached or refused
//	503 not_ready / shutting_down   before Attach / after Close
//	503 offline           not in the cache and the run is --offline (Options.Offline)
//	500 internal          cache, audit, scan or upload failure
//
// # Rules of a request, in order
//
//  1. Token, compared in constant time (over SHA-256 digests).
//  2. URL: ref.Parse; a pin (ref.RequireDigest); a prefix match against
//     the harness's effective allowed_remote_resources (canonicalised once
//     by New with ref.CanonicalPrefix, an invalid entry failing New; then
//     ref.MatchCanonical against the canonical URL from ref.Parse, which is
//     ref.MatchPrefix's answer without re-canonicalising every entry on
//     every request); forge.Parse must find a forge tree URL. Refusals
//     here use no budget.
//  3. Budget: one slot is reserved atomically (compare-and-swap) before any
//     work, so of any number of concurrent requests exactly
//     max_runtime_fetches proceed. A slot, once taken, is used even when
//     the fetch then fails (so an agent cannot hammer the forge), and a
//     cache hit takes one too. Only the requested skill counts: its
//     dependencies are bounded by max_depth and max_resources instead.
//  4. The tree: from the cache (cas.Store.GetTreeFiles: Get, which
//     re-verifies every byte, also handing back SKILL.md as that
//     verification read it), else forge FetchTree, cas.TreeHash must equal
//     the pin, scan with the remote policy (blocked in closed fail mode),
//     cas PutTree. Concurrent requests for one hash share one acquisition.
//     A cache hit is not scanned again: only scanned trees are put in the
//     cache, and the hit is verified to be byte for byte that tree.
//     SKILL.md (name, dependencies:) is parsed from those verified bytes,
//     never re-read from the cache directory. The parse is memoised for
//     the run, keyed by the tree hash: every request still reads and
//     verifies the whole tree through cas; only the frontmatter parse of
//     bytes that hash to the same pinned tree is not repeated (a tree hash
//     names immutable content, so the result cannot differ).
//  5. Audit: one entry, fetch_type "runtime", the run's trace id, the
//     allowlist entry, cache_hit. An audit failure withholds the skill.
//  6. Dependencies (SKILL.md frontmatter dependencies:) go through
//     resolve.ResolveSkill, the static resolver's own walker started at
//     the skill — relative references against the skill's URL, pins,
//     allowlist, forge-only directories, scan before cache, cycles,
//     max_depth and max_resources counted from the skill (depth 0, the
//     first resource) — and are audited as runtime fetches too (the skill
//     itself is not audited twice).
//  7. Placement: each skill is named by its SKILL.md name (when valid per
//     runtime.CheckName), else its directory's basename, and uploaded with
//     its whole tree to SkillsDir/NAME. A name is claimed once per run by
//     the first tree placed under it: the same tree is uploaded again on
//     every request (afterwards the directory holds exactly the pinned tree,
//     whatever the agent did to it), another tree under a taken name is
//     409, never an overwrite. Uploads to one name are serialised;
//     concurrent requests share an upload that began after they arrived.
//
// The token never appears in answers, errors, the log or the audit log.
//
// # Client
//
// ClientFromEnv and Client.FetchSkill are `fullsend fetch-skill`: the
// service URL must be http:// on a loopback IP; the request goes through
// the sandbox's egress proxy when http_proxy/HTTP_PROXY names one on a
// loopback IP (NO_PROXY notwithstanding: inside the sandbox's network
// namespace the runner's loopback is reachable only through that proxy),
// else directly; a proxy anywhere else is never used, so it never sees the
// token.
package fetchsvc
