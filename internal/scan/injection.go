package scan

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"github.com/fullsend-ai/fullsend/internal/lazyre"
	"github.com/fullsend-ai/fullsend/internal/netguard"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Rule ids of the context-injection scanner.
const (
	RuleOverride      = "injection/instruction-override"
	RulePromptLeak    = "injection/system-prompt-exfiltration"
	RuleRoleHijack    = "injection/role-hijack"
	RulePipeShell     = "injection/tool-abuse-pipe-to-shell"
	RuleExfiltrate    = "injection/tool-abuse-exfiltration"
	RuleHiddenComment = "injection/hidden-comment"
	RuleBase64        = "injection/base64-payload"
)

type injPattern struct {
	anchors []string
	re      *lazyre.Regexp // anchored at the anchor: starts with ^
	// pre, if set, is a cheap necessary condition for re to match at an
	// anchor: pre(text, i, end) with i just after the anchor (without a
	// trailing space) and end the end of the window re reads (injpre.go).
	pre func(t []byte, i, end int) bool
	// find, when set, replaces re: it matches at the anchor t[at:] (end
	// bounds the window) and returns the matched range (injrules.go).
	find func(t []byte, at, end int) (s, e int, ok bool)
	// negatable: a match right after "do not", "don't", "never" or "not"
	// is a prohibition, not an instruction.
	negatable bool
}

type injRule struct {
	id   string
	what string // human name used in messages
	pats []injPattern
}

func pat(anchors []string, re string) injPattern {
	return injPattern{anchors: anchors, re: lazyre.New(`(?i)^(?:` + re + `)`)}
}

// withPre adds a necessary condition to a pattern.
func withPre(p injPattern, pre func(t []byte, i, end int) bool) injPattern {
	p.pre = pre
	return p
}

// injSpan bounds how far a pattern may reach from its anchor.
const injSpan = 320

// The patterns read normalised text (see normalize): lower case, invisible
// runes removed, tag characters decoded, look-alikes mapped. Each is
// anchored at a keyword (the anchor must start a word) so that matching is a
// cheap, fail-fast test at the few places a keyword occurs. They are tuned
// against the real agents and skills in the test corpus, which talk about
// tokens, curl, prompts and injection without being attacks: each pattern
// needs an imperative aimed at the agent's own instructions or secrets, not
// just the vocabulary.
var injRules = append([]injRule{
	{id: RuleOverride, what: "instruction override", pats: []injPattern{
		pat([]string{"ignore", "disregard", "forget", "override", "bypass", "abandon", "neglect"},
			`(?:ignore|disregard|forget|override|bypass|abandon|neglect)\s+(?:(?:all|any|every|of|the|these|those)\s+)*`+
				`(?:(?:your|my|previous(?:ly)?|prior|above|earlier|preceding|foregoing|former|original|initial|system|developer|safety)\s+|all\s+)`+
				`(?:[a-z'-]+\s+){0,2}?(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|constraints|context|messages|programming|restrictions)\b`).negated(),
		withPre(pat([]string{"new"}, `new\s+(?:system\s+)?instructions\s*(?:are|follow|:)`), nextWord("system", "instructions")),
		withPre(pat([]string{"do not", "don't", "never"},
			`(?:do\s+not|don't|never)\s+follow\s+(?:your|the|any)\s+(?:previous|prior|original|system|initial)\s+(?:instructions|rules|prompt)`), nextWord("follow")),
	}},
	{id: RulePromptLeak, what: "system-prompt exfiltration", pats: []injPattern{
		withPre(pat([]string{"reveal", "print", "show", "output", "repeat", "recite", "dump", "leak", "disclose", "display", "echo", "write out", "tell me", "give me", "share", "copy", "paste", "send", "post", "upload", "return", "list"},
			`(?:reveal|print|show|output|repeat|recite|dump|leak|disclose|display|echo|write\s+out|tell\s+me|give\s+me|share|copy|paste|send|post|upload|return|list)\s+`+
				`(?:[a-z'-]+\s+){0,3}?(?:your|the|its|all)\s+(?:[a-z'-]+\s+){0,2}?`+
				`(?:system\s+(?:prompt|message|instructions)|(?:initial|original|hidden|secret|entire|exact|verbatim)\s+(?:system\s+)?(?:prompt|instructions)|developer\s+(?:message|prompt|instructions)|pre-?prompt|(?:instructions|prompt)\s+(?:above|you\s+were\s+given))`), preLeak),
		withPre(pat([]string{"what"}, `what\s+(?:is|are|were)\s+your\s+(?:system\s+prompt|(?:initial|original|hidden|exact)\s+(?:prompt|instructions))`), nextWord("is", "are", "were")),
	}},
	{id: RuleRoleHijack, what: "role/identity hijack", pats: []injPattern{
		withPre(pat([]string{"you"}, `you\s+are\s+now\s+(?:an?\s+)?(?:dan\b|unrestricted|unfiltered|uncensored|jailbroken|evil|free\s+(?:from|of)|no\s+longer|in\s+(?:developer|god|dan|jailbreak|unrestricted|admin)\s+mode)`+
			`|you\s+(?:are|have\s+been)\s+(?:no\s+longer\s+(?:bound|restricted|limited|constrained)(?:\s+by\b|\s*(?:[.,;:!]|$))|freed|released|liberated)`), nextWord("are", "have")),
		withPre(pat([]string{"enter", "enable", "activate", "switch to", "turn on"}, `(?:enter|enable|activate|switch\s+to|turn\s+on)\s+(?:developer|god|dan|jailbreak|unrestricted|unfiltered)\s+mode\b`),
			nextWord("developer", "god", "dan", "jailbreak", "unrestricted", "unfiltered")),
		withPre(pat([]string{"act", "behave", "respond"}, `(?:act|behave|respond)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|dan\b)`), nextWord("as")),
		withPre(pat([]string{"pretend"}, `pretend\s+(?:to\s+be|you\s+are|that\s+you\s+are)\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|dan\b|the\s+system|an?\s+admin|root)`), nextWord("to", "you", "that")),
		pat([]string{"from now on"}, `from\s+now\s+on,?\s+you\s+(?:are|will\s+(?:be|act|ignore|obey)|must\s+(?:ignore|obey))\b`),
		pat([]string{"your new"}, `your\s+new\s+(?:role|identity|persona|name)\s+is\b`),
		pat([]string{"do anything now"}, `do\s+anything\s+now\b`),
	}},
	{id: RulePipeShell, what: "download piped to a shell", pats: []injPattern{
		withPre(pat([]string{"curl", "wget", "iwr", "irm", "invoke-webrequest", "invoke-restmethod"},
			`(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n|;&]*\|\s*(?:sudo\s+)?(?:(?:ba|z|k|da|fi|c|tc)?sh|python[23]?|perl|ruby|node|php|iex|invoke-expression)\b`), prePipe),
		withPre(pat([]string{"sh ", "bash", "zsh", "ksh", "dash", "python", "python2", "python3", "perl", "ruby", "node"},
			`(?:(?:ba|z|k|da)?sh|python[23]?|perl|ruby|node)\s+(?:-c\s+)?["']?(?:\$\(|<\(|`+"`"+`)\s*(?:curl|wget)\b`), preShellSubst),
		pat([]string{"iex", "invoke-expression"}, `(?:iex|invoke-expression)\b[^\n]{0,80}(?:downloadstring|iwr|invoke-webrequest|irm|invoke-restmethod)`),
	}},
	{id: RuleExfiltrate, what: "secret exfiltration", pats: []injPattern{
		withPre(pat([]string{"send", "post", "upload", "exfiltrate", "transmit", "forward", "leak", "email", "e-mail", "mail", "share", "paste", "submit", "copy"},
			`(?:send|post|upload|exfiltrate|transmit|forward|leak|e-?mail|mail|share|paste|submit|copy)\s+(?:[^\s]+\s+){0,4}?`+
				`(?:tokens?|secrets?|credentials?|passwords?|api[\s_-]?keys?|private\s+keys?|ssh\s+keys?|access\s+keys?|env(?:ironment)?\s+(?:variables?|vars?)|\.env\b|cookies?|session\s+(?:ids?|tokens?)|\$\{?[a-z_]*(?:token|secret|key|password)[a-z_]*\}?)`+
				`[\s,.]+(?:[^\s]+\s+){0,4}?(?:to|at|into|via)\s+(?:https?://|ftp://|[\w.+-]+@[\w-]+\.|[\w-]+\.(?:com|net|org|io|xyz|ru|cn|sh|site|dev|app|me|tk|top)\b|(?:my|our|this|that|the|an?|external|remote|attacker'?s?|following)\s+(?:[a-z-]+\s+)?(?:server|webhook|endpoint|url|address|email|host|domain|site|bucket|channel|collector|listener)|(?:webhook|pastebin|ngrok|requestbin|interact\.sh|burpcollaborator|discord|telegram))`), preExfil),
		withPre(pat([]string{"curl", "wget"},
			`(?:curl|wget)\b[^\n]*?(?:\s-d|--data(?:-binary|-raw|-urlencode)?|\s-F|--form|\s-T|--upload-file|--post-data|--post-file|--body-file)[=\s]+["']?[^\s]*?(?:\$\{?[a-z_]*(?:token|secret|password|passwd|api_?key|private_?key)[a-z_]*\}?|~?/?\.ssh/|/etc/(?:passwd|shadow)|\.env\b|\$\((?:env|printenv|cat\s+[^)]*(?:\.env|\.ssh|credentials))|/proc/self/environ)`), preUpload),
	}},
}, moreInjRules...)

// injAnchorTable returns the matcher of every anchor and, per anchor, its
// (rule, pattern) pairs; built on first use, not at package initialisation.
var injAnchorTable = sync.OnceValues(func() (*kwMatcher, [][][2]int) {
	var kws []string
	var pats [][][2]int
	for ri, r := range injRules {
		for pi, p := range r.pats {
			for _, a := range p.anchors {
				kws = append(kws, a)
				pats = append(pats, [][2]int{{ri, pi}})
			}
		}
	}
	return newKWMatcher(kws), pats
})

// injStems marks the anchors that are word stems (stemAnchor).
var injStems = sync.OnceValue(func() []bool {
	injAnchors, _ := injAnchorTable()
	out := make([]bool, len(injAnchors.kws))
	for i, k := range injAnchors.kws {
		out[i] = stemAnchor(k)
	}
	return out
})

type injectionScanner struct{}

// NewInjectionScanner returns the context-injection scanner: instruction
// overrides, system-prompt exfiltration, role hijacks, pipe-to-shell and
// secret exfiltration, also when hidden in HTML/markdown comments, base64
// blobs, or with invisible, tag and look-alike characters.
func NewInjectionScanner() Scanner { return injectionScanner{} }

func (injectionScanner) Name() string { return "injection" }

type injHit struct {
	rule    int
	start   int // offset in content
	end     int
	text    string // the normalised matched text
	hidden  bool   // the raw bytes differ from the normalised reading
	wrapper string // "" | RuleHiddenComment | RuleBase64 | RuleEncoded
	// encoding names the encoding of a RuleEncoded hit ("hex", "ROT13" …)
	encoding string
}

// The patterns of one scan may read at most max(minInjectionBudget,
// injectionBudgetFactor × content size) bytes; content dense enough in
// anchors to exceed it fails the scan (a critical finding in closed mode)
// instead of taking minutes.
const (
	minInjectionBudget    = 4 << 20
	injectionBudgetFactor = 32
)

func (sc injectionScanner) Scan(ctx context.Context, content []byte, m Meta) ([]Finding, error) {
	if len(content) > maxIndexed {
		return nil, fmt.Errorf("content of %d bytes is too large to scan (limit %d)", len(content), maxIndexed)
	}
	injAnchors, _ := injAnchorTable()
	return sc.scanHits(ctx, content, m, findHits(injAnchors, content), newSpecialIndex(content))
}

// scanHits is Scan given the occurrences of the anchors in content (in
// order) and the index of its marked bytes.
func (injectionScanner) scanHits(ctx context.Context, content []byte, m Meta, anchors []kwHit, sp *specialIndex) ([]Finding, error) {
	budget := max(minInjectionBudget, injectionBudgetFactor*len(content))
	limit := budget
	c := &injCollector{content: content, budget: &budget, comments: commentRanges(content), seen: map[[2]int]bool{}}
	c.rawPass(anchors)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.normalizedPass(sp)
	c.structPass(anchors)
	c.commentPass()
	c.base64Pass()
	c.encodedPass(anchors)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if budget < 0 {
		return nil, fmt.Errorf("content too dense in injection keywords to scan in bounded time (work budget of %d bytes exceeded)", limit)
	}
	if len(c.hits) == 0 {
		return nil, nil
	}
	return injFindings(content, m, c.hits), nil
}

// injCollector gathers the pattern hits of one content over the four
// passes, each (rule, start) once, charging the shared work budget.
type injCollector struct {
	content  []byte
	budget   *int
	comments [][2]int // HTML comment bodies
	seen     map[[2]int]bool
	hits     []injHit
}

func (c *injCollector) add(h injHit) {
	k := [2]int{canonRule(h.rule), h.start}
	if c.seen[k] {
		return
	}
	c.seen[k] = true
	c.hits = append(c.hits, h)
}

func (c *injCollector) inComment(off int) bool { return inRanges(c.comments, off) }

func (c *injCollector) match(text []byte, offs []int, base int, raw []byte) []injHit {
	return matchText(text, offs, base, raw, c.budget)
}

// rawPass: the raw text, at every anchor.
func (c *injCollector) rawPass(anchors []kwHit) {
	for _, h := range matchHits(c.content, anchors, nil, 0, c.content, c.budget) {
		if !c.inComment(h.start) {
			c.add(h)
		}
	}
}

// normalizedPass: lines holding a rune that normalises to something else
// (invisible, tag, look-alike, compatibility, combining mark, unusual
// space) or a textual disguise (markup, escapes, letter spacing: see
// textIndex), normalised with a line either side: there the anchors may be
// split or disguised.
func (c *injCollector) normalizedPass(sp *specialIndex) {
	tx := newTextIndex(c.content)
	sus := -2 // next suspicious rune at or after off (-1: none left)
	for off := 0; off < len(c.content); {
		if sus != -1 && sus < off {
			sus = nextSuspicious(sp, off)
		}
		n := sus
		if t := tx.at(off); t >= 0 && (n < 0 || t < n) {
			n = t
		}
		if n < 0 {
			break
		}
		ws, we := lineWindow(c.content, n)
		if c.content[n] == '-' {
			// a hyphenated word: the phrase may run on two more lines
			ws, we = lineSpan(c.content, n, 1, 2)
		}
		c.matchNormalized(ws, we)
		off = we + 1
	}
}

// matchNormalized reads content[ws:we] normalised, and in leetspeak when
// it holds a leet word, and records the hits outside comments.
func (c *injCollector) matchNormalized(ws, we int) {
	text, offs := normalize(c.content[ws:we], ws)
	found := c.match(text, offs, ws, c.content)
	if lt := leetRead(text); lt != nil {
		found = append(found, c.match(lt, offs, ws, c.content)...)
	}
	for _, h := range found {
		if !c.inComment(h.start) {
			c.add(h)
		}
	}
}

// structPass: the lines around an anchor of the override rule that hold
// markdown or HTML structure a phrase may be split by (links, table rows,
// blockquote or list continuations, a hyphen ending a line, a comment or
// a break tag), normalised (normsplit.go).
func (c *injCollector) structPass(anchors []kwHit) {
	done := -1
	for _, h := range anchors {
		at, k := int(h.off), int(h.kw)
		if at < done || *c.budget < 0 || !structAnchors()[k] {
			continue
		}
		ws, we := lineSpan(c.content, at, 1, 3)
		if !hasStructure(c.content[max(ws, at-2):min(we, at+80)]) || !overrideObjects().any(c.content[at:we]) {
			continue // a split phrase runs on after its verb, to its object
		}
		done = we
		*c.budget -= we - ws
		c.matchNormalized(ws, we)
	}
}

// structAnchors marks the anchors that start an English override phrase
// (its verbs): the anchors structPass looks around.
var structAnchors = sync.OnceValue(func() []bool {
	injAnchors, _ := injAnchorTable()
	verbs := map[string]bool{}
	for _, v := range overrideVerbs {
		verbs[v] = true
	}
	out := make([]bool, len(injAnchors.kws))
	for i, k := range injAnchors.kws {
		out[i] = verbs[k]
	}
	return out
})

// overrideObjects finds the words an override's object holds.
var overrideObjects = sync.OnceValue(func() *kwMatcher {
	return newKWMatcher([]string{"instruction", "previous", "prior", "above", "earlier", "rules", "guid", "prompt", "told",
		"direct", "polic", "constraint", "restriction", "everything", "preceding", "foregoing", "original", "system"})
})

// hasStructure reports whether b holds structure skipStructure or
// normalize reads through beyond the textual disguises.
func hasStructure(b []byte) bool {
	return bytes.Contains(b, []byte("](")) || bytes.Contains(b, []byte("][")) || bytes.Contains(b, []byte("\n>")) || bytes.Contains(b, []byte("\n- ")) ||
		bytes.Contains(b, []byte("\n* ")) || bytes.Contains(b, []byte("-\n")) || bytes.Contains(b, []byte("<!--")) || bytes.Contains(b, []byte("<br")) ||
		bytes.HasPrefix(b, []byte("|")) || bytes.Contains(b, []byte("\n|")) || bytes.Contains(b, []byte(" | ")) || bytes.Contains(b, []byte("</p")) ||
		bytes.Contains(b, []byte("</div")) || bytes.Contains(b, []byte("</li")) || bytes.Contains(b, []byte("</t"))
}

// commentPass: comment bodies, reported as hidden comments.
func (c *injCollector) commentPass() {
	for _, cm := range c.comments {
		body := c.content[cm[0]:cm[1]]
		var found []injHit
		if firstSuspicious(body) >= 0 {
			text, offs := normalize(body, cm[0])
			found = c.match(text, offs, cm[0], c.content)
		} else {
			found = c.match(body, nil, cm[0], c.content)
		}
		for _, h := range found {
			h.wrapper = RuleHiddenComment
			c.add(h)
		}
	}
}

// base64Pass: base64, hex and base32 blobs and runs of URL escapes or
// character codes that decode to text, read through nested encodings
// (encchain.go), one finding per blob.
func (c *injCollector) base64Pass() {
	blobs, others := encodedRuns(c.content, true)
	for _, b := range blobs {
		dec, name := decodeBlob(c.content[b[0]:b[1]])
		if dec == nil {
			continue
		}
		c.addDecoded(dec, name, b)
	}
	for _, st := range others {
		if dec, name := decodeStretch(c.content[st[0]:st[1]]); dec != nil {
			c.addDecoded(dec, name, st)
		}
	}
}

// addDecoded records the first hit in the decoded text of content[b[0]:
// b[1]] (name: its encoding) as one finding spanning the blob: a base64
// blob's as RuleBase64, another encoding's as RuleEncoded.
func (c *injCollector) addDecoded(dec []byte, name string, b [2]int) {
	h, chain, ok := readDecoded(dec, name, 1, c.budget)
	if !ok {
		return
	}
	h.start, h.end, h.hidden = b[0], b[1], false
	if strings.Trim(strings.ReplaceAll(chain, "base64", ""), ", ") == "" {
		// base64, or base64 inside base64
		h.wrapper = RuleBase64
	} else {
		h.wrapper, h.encoding = RuleEncoded, encodingName(chain)
	}
	c.add(h)
}

// injFindings turns the hits into findings in position order, under the
// per-rule cap.
func injFindings(content []byte, m Meta, hits []injHit) []Finding {
	ln := newLines(content)
	var fences [][2]int
	fencesDone := false
	fenced := func() [][2]int {
		if !fencesDone {
			fences, fencesDone = fencedRanges(content), true
		}
		return fences
	}
	out := make([]Finding, 0, len(hits))
	var caps ruleCap
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].start < hits[j].start })
	for _, h := range hits {
		r := injRules[h.rule]
		id := r.id
		if h.wrapper != "" {
			id = h.wrapper
		}
		if !caps.take(id) {
			continue
		}
		line, col := ln.pos(h.start)
		f := Finding{Scanner: "injection", Rule: r.id, Severity: Critical, Path: m.Path, Line: line, Column: col,
			Excerpt: ln.excerpt(h.start, h.end)}
		describeInjection(&f, content, h, fenced)
		out = append(out, f)
		caps.keep(f)
	}
	out = append(out, caps.summaries()...)
	sortFindings(out)
	return out
}

// describeInjection sets f's rule, message and severity for hit h: the
// wrapper that hid it, a disguise, or documentation that shows the phrase
// rather than says it (a warning).
func describeInjection(f *Finding, content []byte, h injHit, fenced func() [][2]int) {
	r := injRules[h.rule]
	if r.id == RulePipeShell && h.wrapper == "" && !h.hidden {
		if inRanges(fenced(), h.start) && httpsOnly(h.text) {
			// Documentation showing an install step (a Dockerfile RUN
			// line) rather than telling the agent to run it.
			f.Severity = Warning
		}
	}
	quoted := fmt.Sprintf("%q", clip(visibleString(h.text), 120))
	switch h.wrapper {
	case RuleHiddenComment:
		f.Rule = RuleHiddenComment
		f.Message = fmt.Sprintf("comment hides %s text (%s): %s", r.what, r.id, quoted)
	case RuleEncoded:
		f.Rule = RuleEncoded
		f.Message = fmt.Sprintf("%s decodes to %s text (%s): %s", h.encoding, r.what, r.id, quoted)
	case RuleBase64:
		f.Rule = RuleBase64
		f.Message = fmt.Sprintf("base64 blob decodes to %s text (%s): %s", r.what, r.id, quoted)
	default:
		f.Message = fmt.Sprintf("%s: %s", r.what, quoted)
		if h.hidden {
			f.Message += " (disguised: read through invisible, tag or look-alike characters, escapes, markup or leetspeak)"
		} else if r.id == RuleModelMarkup && (inCodeSpan(content, h.start, h.end) || inRanges(fenced(), h.start)) {
			// A template token shown in code: documentation of the format.
			f.Severity = Warning
			f.Message += " (shown as code, not markup)"
		} else if mentionRule(r.id) && isMention(content, h.start, h.end, fenced()) {
			// Documentation quoting the phrase as an example (mention.go).
			f.Severity = Warning
			f.Message += " (quoted or listed as an example, not an instruction)"
		}
	}
}

// matchText runs every pattern at each of its anchors in text. offs maps
// text offsets to content offsets (nil: text is content[base:]); raw is the
// content, used to tell whether a normalised match was disguised.
func matchText(text []byte, offs []int, base int, raw []byte, budget *int) []injHit {
	injAnchors, _ := injAnchorTable()
	return matchHits(text, findHits(injAnchors, text), offs, base, raw, budget)
}

// matchHits is matchText given the anchors' occurrences in text.
func matchHits(text []byte, anchors []kwHit, offs []int, base int, raw []byte, budget *int) []injHit {
	var out []injHit
	injAnchors, injAnchorPats := injAnchorTable()
	for _, ah := range anchors {
		at, k := int(ah.off), int(ah.kw)
		kw := injAnchors.kws[k]
		if *budget < 0 || at > 0 && isWordByte(kw[0]) && isWordByte(text[at-1]) {
			continue
		}
		// Every anchor is a whole word in its pattern (or ends in a space
		// or a non-word byte).
		if isWordByte(kw[len(kw)-1]) && at+len(kw) < len(text) && isWordByte(text[at+len(kw)]) && !injStems()[k] {
			continue
		}
		end := min(len(text), at+injSpan)
		*budget -= (end - at) * len(injAnchorPats[k])
		for _, rp := range injAnchorPats[k] {
			p := &injRules[rp[0]].pats[rp[1]]
			if p.pre != nil && !p.pre(text, at+len(strings.TrimRight(injAnchors.kws[k], " ")), end) {
				continue
			}
			if p.negatable && negatedBefore(text, at) {
				continue
			}
			var s, e int
			if p.find != nil {
				var ok bool
				if s, e, ok = p.find(text, at, end); !ok {
					continue
				}
			} else {
				loc := p.re.FindIndex(text[at:end])
				if loc == nil {
					continue
				}
				s, e = at+loc[0], at+loc[1]
			}
			h := injHit{rule: rp[0], text: string(text[s:e])}
			if offs == nil {
				h.start, h.end = base+s, base+e
			} else {
				h.start = offs[s]
				_, sz := utf8.DecodeRune(raw[offs[e-1]:])
				h.end = offs[e-1] + sz
				h.hidden = !bytes.EqualFold(raw[h.start:h.end], text[s:e])
			}
			out = append(out, h)
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// lineWindow returns the byte range of the line holding off plus one line
// either side (phrases wrap in markdown), without the final newline.
func lineWindow(b []byte, off int) (int, int) {
	start := bytes.LastIndexByte(b[:off], '\n')
	if start >= 0 {
		if p := bytes.LastIndexByte(b[:start], '\n'); p >= 0 {
			start = p + 1
		} else {
			start = 0
		}
	} else {
		start = 0
	}
	end := len(b)
	if i := bytes.IndexByte(b[off:], '\n'); i >= 0 {
		end = off + i
		if j := bytes.IndexByte(b[end+1:], '\n'); j >= 0 {
			end = end + 1 + j
		} else {
			end = len(b)
		}
	}
	return start, end
}

// lineSpan returns the byte range of the line holding off with up to
// before lines before it and after lines after it, without the final
// newline.
func lineSpan(b []byte, off, before, after int) (int, int) {
	s := bytes.LastIndexByte(b[:off], '\n') + 1
	for n := 0; n < before && s > 0; n++ {
		s = bytes.LastIndexByte(b[:s-1], '\n') + 1
	}
	e := off
	for n := 0; n <= after; n++ {
		i := bytes.IndexByte(b[e:], '\n')
		if i < 0 {
			return s, len(b)
		}
		if n == after {
			return s, e + i
		}
		e += i + 1
	}
	return s, e
}

// commentRanges returns the [start, end) ranges of HTML comments
// (<!-- … -->, an unterminated one runs to the end) and of markdown
// reference-style comments ([//]: # (…), [comment]: <> (…)), sorted.
func commentRanges(b []byte) [][2]int {
	var out [][2]int
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte("<!--"))
		if i < 0 {
			break
		}
		s := off + i + 4
		e := bytes.Index(b[s:], []byte("-->"))
		if e < 0 {
			out = append(out, [2]int{s, len(b)})
			break
		}
		out = append(out, [2]int{s, s + e})
		off = s + e + 3
	}
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte("]: "))
		if i < 0 {
			break
		}
		at := off + i
		off = at + 3
		// The label starts the line and is short: look back at most 256
		// bytes (a scan back to the line start per "]: " would be
		// quadratic on one long line).
		from := max(0, at-256)
		ls := bytes.LastIndexByte(b[from:at], '\n') + 1 + from
		if ls == from && from > 0 || ls >= len(b) || b[ls] != '[' {
			continue
		}
		label := b[ls+1 : at]
		rest := b[at+3:]
		le := bytes.IndexByte(rest, '\n')
		if le < 0 {
			le = len(rest)
		}
		line := bytes.TrimSpace(rest[:le])
		if !(bytes.Equal(label, []byte("//")) || bytes.EqualFold(label, []byte("comment"))) &&
			!bytes.HasPrefix(line, []byte("# (")) && !bytes.HasPrefix(line, []byte("<> (")) {
			continue
		}
		if bytes.HasPrefix(line, []byte("# ")) || bytes.HasPrefix(line, []byte("<> ")) {
			out = append(out, [2]int{at + 3, at + 3 + le})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// minBase64 is the shortest run treated as a possible base64 blob (18
// decoded bytes: long enough for "ignore all previous instructions" to need
// more, short enough to catch it).
const minBase64 = 24

var b64Table = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=" {
		t[c] = true
	}
	return t
}()

// base64Blobs returns the [start, end) ranges of runs of base64 characters
// at least minBase64 long that contain a digit, '+' or '/', or both cases.
// Such a run holds no space, control or non-ASCII byte, so it lies in a
// stretch free of them, which then holds two consecutive eight-byte words
// free of them: the content is read a word at a time for those (prose has a
// space in nearly every word), and only such stretches are searched.
func base64Blobs(b []byte) [][2]int {
	blobs, _ := encodedRuns(b, false)
	return blobs
}

// encodedRuns is base64Blobs that also returns, when others is set, the
// stretches of non-space bytes that hold at least eleven commas or twelve
// '%' (a list of character codes, a run of URL escapes: see
// decodeStretch), found in the same read.
func encodedRuns(b []byte, others bool) (blobs, other [][2]int) {
	const (
		lo7 = 0x7f7f7f7f7f7f7f7f
		hi  = 0x8080808080808080
	)
	free := func(c byte) bool { return c > 0x20 && c < 0x80 }
	var out [][2]int
	prevFree := false
	for i := 0; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		isFree := (w&hi | ^(w&lo7+0x5f5f5f5f5f5f5f5f)&hi) == 0 // no byte <= 0x20 or >= 0x80
		if !isFree || !prevFree {
			prevFree = isFree
			continue
		}
		s, e := i-8, i+8
		for s > 0 && free(b[s-1]) {
			s--
		}
		for e < len(b) && free(b[e]) {
			e++
		}
		out = base64Runs(b, s, e, out)
		if others && e-s >= 36 {
			if st := b[s:e]; bytes.Count(st, []byte(",")) >= 11 || bytes.Count(st, []byte("%")) >= 12 {
				other = append(other, [2]int{s, e})
			}
		}
		prevFree = false
		i = e - 8 // the next word starts at e
	}
	return out, other
}

// base64Runs appends the blobs of b[from:to) (see base64Blobs). It probes
// every minBase64-th byte first, so text costs about one load per
// minBase64 bytes.
func base64Runs(b []byte, from, to int, out [][2]int) [][2]int {
	b = b[:to]
	for i := from; i+minBase64 <= len(b); {
		j := i + minBase64 - 1
		if !b64Table[b[j]] {
			i = j + 1
			continue
		}
		k := j
		for k > i && b64Table[b[k-1]] {
			k--
		}
		if k > i {
			i = k // b[k-1] breaks the run: a run can only start at k
			continue
		}
		e := j + 1
		for e < len(b) && b64Table[b[e]] {
			e++
		}
		if b64Mixed(b[i:e]) {
			out = append(out, [2]int{i, e})
		}
		i = e + 1
	}
	return out
}

// b64Mixed reports whether a run of base64 characters holds a digit, '+',
// '/', '-', '_' or '=', or letters of both cases: a run of one-case letters
// is a word, not a blob.
func b64Mixed(run []byte) bool {
	var upper, lower bool
	for _, c := range run {
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		default:
			return true
		}
	}
	return upper && lower
}

// decodeBase64Text decodes a blob (standard or URL alphabet, padded or not)
// and returns it when it reads as text: at least 16 bytes, valid UTF-8,
// nearly all printable. Otherwise nil.
func decodeBase64Text(blob []byte) []byte {
	s := string(bytes.TrimRight(blob, "="))
	var dec []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		if dec, err = enc.DecodeString(s); err == nil {
			break
		}
	}
	if err != nil || len(dec) < 16 || !utf8.Valid(dec) {
		return nil
	}
	printable := 0
	for _, c := range dec {
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' || c == '\r' || c >= 0x80 {
			printable++
		}
	}
	if printable*100 < len(dec)*95 {
		return nil
	}
	return dec
}

// fencedRanges returns the [start, end) byte ranges of fenced code blocks
// (``` or ~~~ fences at the start of a line, after spaces only, up to the
// closing fence or the end of the content). It visits only the lines
// holding a fence string, found with bytes.Index.
func fencedRanges(b []byte) [][2]int {
	var out [][2]int
	open := -1
	var fence []byte
	backticks, tildes := []byte("```"), []byte("~~~")
	for off := 0; off < len(b); {
		var p int
		if open < 0 {
			p = bytes.Index(b[off:], backticks)
			// A ~~~ fence can only come first if it starts before the
			// first ``` (or there is none).
			lim := len(b)
			if p >= 0 {
				lim = off + p
			}
			if q := bytes.Index(b[off:lim], tildes); q >= 0 {
				p = q
			}
		} else {
			p = bytes.Index(b[off:], fence)
		}
		if p < 0 {
			break
		}
		p += off
		ls := p
		for ls > off && b[ls-1] == ' ' {
			ls--
		}
		le := len(b)
		if i := bytes.IndexByte(b[p:], '\n'); i >= 0 {
			le = p + i
		}
		if ls == off || b[ls-1] == '\n' { // only spaces before it on its line
			if open < 0 {
				open, fence = le, b[p:p+3]
			} else {
				out = append(out, [2]int{open, ls})
				open = -1
			}
		}
		off = le + 1
	}
	if open >= 0 {
		out = append(out, [2]int{open, len(b)})
	}
	return out
}

func inRanges(rs [][2]int, off int) bool {
	i := sort.Search(len(rs), func(i int) bool { return rs[i][1] > off })
	return i < len(rs) && rs[i][0] <= off
}

// httpsOnly reports whether every URL in s is https with a host name (not
// an IP literal) and s names at least one.
func httpsOnly(s string) bool {
	n := 0
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '"' || r == '\'' || r == '\t' }) {
		i := strings.Index(f, "://")
		if i < 0 {
			continue
		}
		n++
		if !strings.HasSuffix(f[:i], "https") {
			return false
		}
		auth := f[i+3:]
		if j := strings.IndexAny(auth, "/?#"); j >= 0 {
			auth = auth[:j]
		}
		host, _, ok := netguard.SplitAuthority(auth)
		if _, isIP := netguard.HostAddr(host); !ok || isIP {
			return false
		}
	}
	return n > 0
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Line != fs[j].Line {
			return fs[i].Line < fs[j].Line
		}
		if fs[i].Column != fs[j].Column {
			return fs[i].Column < fs[j].Column
		}
		return fs[i].Rule < fs[j].Rule
	})
}
