// Package scan inspects agent definitions, skills, policies, plugins and
// context files (CLAUDE.md, AGENTS.md, SKILL.md) before they reach a
// sandbox: when a remote resource is fetched (before it is cached), when the
// run orchestration uploads files (host side), and inside the sandbox
// (`fullsend scan context`). It owns the scanners, the per-origin policy, the
// fail mode and the findings log.
//
// # Scanners and rules
//
// unicode (rule ids "unicode/…"):
//   - bidi-control (critical): U+202A–U+202E, U+2066–U+2069 (Trojan Source).
//   - tag-characters (critical): U+E0000–U+E007F; the ASCII they hide is
//     decoded into the message. Emoji subdivision flags (U+1F3F4 + tags) pass.
//   - zero-width (warning): zero-width space/joiners, word joiner, invisible
//     operators, soft hyphen, fillers, variation selectors, BOM after the
//     start… Emoji ZWJ sequences and joiners inside non-Latin words pass;
//     next to an ASCII letter or digit they never do.
//   - control-character (warning): C0/C1 controls other than tab, LF, CR
//     (e.g. terminal escape sequences).
//   - mixed-script-confusable (critical): a word mixing Latin letters with
//     Cyrillic/Greek/Armenian look-alikes; the message gives its Latin reading.
//   - nfkc-compatibility (warning): a word written with fullwidth,
//     mathematical, circled or other compatibility letters; the message gives
//     the NFKC (ASCII) text.
//
// injection ("injection/…", critical): instruction-override,
// system-prompt-exfiltration, role-hijack, tool-abuse-pipe-to-shell (a
// warning when it is an https download inside a fenced code block, i.e.
// documentation such as a Dockerfile RUN line), tool-abuse-exfiltration;
// hidden-comment when such text sits in an HTML comment or a markdown
// "[//]: #" comment; base64-payload when a base64 blob (24+ characters,
// nested once) decodes to such text. The patterns run on a normalised
// reading of the text: invisible and bidi runes removed, tag characters
// decoded, look-alikes and compatibility letters mapped to ASCII, lower case.
// So payloads split with zero-width joiners, written in tag characters, in
// homoglyphs, in comments or in base64 are found, and reported as disguised.
// The patterns need an imperative aimed at the agent's instructions or
// secrets, not mere vocabulary: real skills talk about tokens, curl, system
// prompts and injection defence (the test corpus proves they pass).
// Phrases quoted or listed as examples (an override phrase in quotes or
// backticks next to a word such as "like", "avoid" or "phrases", a list of
// phrases to avoid, a string literal in a fenced code block) are warnings,
// not critical; mention.go gives the exact rule and its residual risk. Speed:
// most patterns have a cheap necessary condition (injpre.go: the next word,
// a short word walk to the determiner or secret word, a '|' on the line…)
// checked before the regex; TestInjectionPrechecksNecessary holds each to
// never refusing a place where its regex matches.
//
// secrets ("secrets/<gitleaks rule id>", critical for both origins):
// gitleaks v8.30.1's default rules, as data: secretrules is a table
// generated from the pinned module's config/gitleaks.toml (MIT; the
// generator and the gitleaks dependency live in the nested module
// gitleaksdiff, so this module does not link gitleaks). A secret in a local
// file is critical too: whatever is uploaded into the sandbox is readable by
// the agent, and by anything that injects instructions into it. Excerpts and
// messages show at most the first four characters of a secret (of 16 or
// more) and its length. Speed: gitleaks gates each rule on its keywords per
// fragment, which on markdown lets nearly every rule run over every byte.
// We find the keywords ourselves and run a rule's regular expression only
// on the lines around its keywords (eleven lines more for the curl and
// YAML rules: five continuations after one or two line breaks each; 200
// for private keys; a window's end is not an end of text, so a match
// ending there is read again with the next line), after a cheap necessary condition for the
// hottest rules (an assignment operator after the keyword for gitleaks'
// generated "semi-generic" rules; hand-written conditions for seven named
// rules, each active only while the loaded regex is byte-for-byte the one it
// was derived from; for the semi-generic rules also a run of the secret's
// characters, of its minimum length, right after the operator — class and
// length derived from the rule's own regex with regexp/syntax; the curl
// rules try their flag expression only where "-H"/"--header" or
// "-u"/"--user" follows whitespace). Rule patterns are compiled on first
// need, prefilters derived on a rule's first keyword hit. To the matches
// found in the windows we apply what gitleaks' detector applies to a
// fragment holding the whole content (secretmatch.go): newlines trimmed
// from the match, the secret is the rule's secretGroup or the
// first non-empty group, the entropy floor (gitleaks' formula), the global
// then the rule's allowlists (regexes on the secret, match or line, joined
// as gitleaks joins them; stop words; paths; "and" conditions), the rule's
// path filter, file paths exempted by allowlists, and the report filter
// dropping a generic-rule finding whose secret a non-generic finding on
// the same line contains. The differential test in gitleaksdiff holds this
// to pinned gitleaks on the corpus and on secrets generated from every
// rule. Known difference from running gitleaks on a whole file: a match
// that does not lie within its keyword's window is not seen (gitleaks runs
// a rule over the whole file once any of its keywords appears anywhere).
// A secret repeated on one line is one finding. A deliberate difference:
// a "gitleaks:allow" comment in the content does not suppress a finding
// (the content's author cannot vouch for it; scan-accept.yaml does).
//
// ssrf ("ssrf/…"): URLs in the content (any scheme) whose host is a cloud
// metadata endpoint (metadata-endpoint, critical) or another internal
// address or name (internal-address, warning: localhost, *.localhost,
// *.internal, nip.io-style names, IP literals in any notation — decimal
// 2130706433, hex 0x7f.1, octal 0177.0.0.1, short 127.1, IPv6 and
// v4-mapped); nothing for addresses inside allowed_private_networks. Address
// classes come from internal/netguard. Nothing is resolved or fetched.
//
// llm-guard (optional): POST {url}/analyze/prompt {"prompt": text} with a
// bearer token from the env var security.llm_guard.token_env. See "ML
// threshold" below. When configured but unreachable, slow (timeout) or
// answering an error, the finding llm-guard/unavailable is critical in
// closed mode and a warning in open mode. When not configured every result
// carries the notice NoticeMLOff: never a silent pass.
//
// # Policies per origin
//
// Local content (org or repo files): context-injection scan on by default,
// may be turned off (security.scan.local.context_injection: false, with a
// notice on every result); ML threshold 0.92. Remote content (fetched from a
// URL): context-injection scan always on, whatever any configuration says;
// ML threshold 0.95. Unicode, secrets and ssrf scans always run.
//
// # ML threshold
//
// Seed 000 gives local content a threshold of 0.92 and remote content 0.95,
// "a higher bar", and says remote content is scanned more strictly. We read
// the threshold as the pass bar: the minimum confidence that content is
// benign. With the classifier's injection score s in [0,1] (for LLM Guard,
// the highest positive per-scanner risk score it returns), content passes
// only when 1-s >= threshold and the server says is_valid. Local content
// therefore fails above s = 0.08, remote above s = 0.05: a higher threshold
// is stricter. (LLM Guard's own PromptInjection threshold has the opposite
// sense — flag when s > threshold — and read that way 0.95 would make remote
// content the weaker check, contradicting the seed.) Monotonicity: New
// raises a remote threshold below max(0.95, local threshold) to that value,
// with a notice, so no configuration scans remote content less strictly than
// local content; config rejects values outside (0, 1]; a harness
// (Overrides) can only raise thresholds, enable the local context-injection
// scan and switch the fail mode to closed.
//
// # Fail modes and findings
//
// fail_mode closed (default): a critical finding that is not accepted
// blocks (Result.Blocked, Result.Err wraps ErrBlocked). open: the same
// findings are reported, nothing blocks, and the ML layer's unavailability
// is only a warning. A scanner that fails is itself a finding (critical in
// closed mode): a scan that did not run never passes. Every finding is appended to the findings JSONL
// (FindingsPath: <cache dir>/findings.jsonl, beside audit.jsonl) with time,
// origin, kind, fail mode and whether the content was blocked, via
// audit.AppendJSONL (one write per line, 0600).
//
// # Accepted findings
//
// A reviewed false positive is accepted in the fullsend dir's
// scan-accept.yaml (AcceptFile; format in ParseAcceptances): rule id,
// sha256 of the exact bytes, reason and who. Options.Accept carries the
// entries and Pipeline.Scan applies them, the only place they take
// effect: every finding carries the sha256 of its content (Finding.SHA256),
// a finding whose (rule, sha256) is accepted is marked Finding.Accepted,
// keeps its severity, is still reported and logged, and does not block
// (Finding.Blocks). Changed bytes have another hash and are judged afresh;
// fetched content is no exception. Findings that say a scan did not run
// (…/error, llm-guard/unavailable) can never be accepted.
//
// Findings carry 1-based line and rune column, and an excerpt in which
// invisible runes are written <U+XXXX> and invalid bytes <0xXX>; excerpts
// are valid UTF-8 and at most about 80 runes of context.
//
// # Bounded work
//
// Hostile content must not turn a scan into a denial of service. Each
// scanner reports at most 50 findings per rule and content (then one "N more"
// summary finding). On lines longer than about 1.3 KB a single-line secrets
// rule sees 256 bytes before and 1 KB after its keyword, multi-line rules at
// most 64 KB. The injection and secrets scanners have work budgets
// (max(4 MiB, 32× resp. 24× the content size) bytes read by regular
// expressions); content so dense in keywords that it exceeds them fails the
// scan with an error, which the pipeline turns into a critical finding in
// closed mode. All other passes are linear in the content size.
//
// # Large content
//
// Pipeline.ScanReaderAt (used by `fullsend scan`) reads content longer than
// two chunks (1 MiB each) chunk by chunk, so memory does not grow with the
// file, with exactly the findings Scan gives on the whole content. Chunks
// end only at a quiet line start, where no scanner's reading crosses: the
// line before is blank and the line itself is neither blank nor a list item,
// no non-ASCII or control byte is near, no fenced block or HTML comment is
// open, no multi-line secrets rule's window reaches it, and the injection
// patterns anchored just before it match the same text whether the content
// ends there or not. Where no such line comes, the chunk grows (at worst to
// the whole content). The per-rule cap and its summaries are merged across
// chunks; a chunk whose scanner fails, or a secrets rule over its cap, makes
// the content scanned whole again. With the ML layer, content is read whole
// (the classifier judges it as one). stream.go has the reasoning per
// scanner; TestStreamStraddlingConstructs holds each rule to a construct it
// keeps whole, and FuzzStream compares both ways.
//
// # Speed
//
// The pipeline finds the secrets keywords and the injection anchors in one
// pass over the content (one matcher holding both sets: at most positions
// one probe of a hashed four-byte key, which also answers for three-byte
// keywords, and one of a two-byte set; TestKWFindMatchesRef holds it to the
// plain trigram search), and lists the
// offsets of non-ASCII and control bytes once (reading eight bytes at a
// time) for the unicode scanner and the injection scanner's search for
// disguised runes. Line positions are computed only up to the last finding. BenchmarkPipelineMarkdown measures the non-ML
// pipeline on the corpus markdown.
//
// A Pipeline and the scanners are safe for concurrent use. The secrets
// rule set is loaded once per process.
package scan
