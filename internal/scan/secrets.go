package scan

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/fullsend-ai/fullsend/internal/lazyre"
	"github.com/fullsend-ai/fullsend/internal/scan/secretrules"
)

// RuleSecretPrefix prefixes the gitleaks rule id in secret findings
// ("secrets/github-pat").
const RuleSecretPrefix = "secrets/"

// secretsEngine applies gitleaks' default rules (secretrules) behind a
// fast prefilter. gitleaks skips rules whose keywords are absent from a
// fragment, but on a whole markdown file some keyword ("key", "token",
// "sk", "s.") is nearly always present, so nearly every rule would run over
// every byte (≈1 MB/s measured). We instead find keyword occurrences
// ourselves, run each rule's regular expression only on the lines around
// its keywords, and apply gitleaks' semantics (secret group, entropy,
// allowlists, stop words, gitleaks:allow, the generic-rule filter) to the
// matches found there (secretmatch.go).
type secretsEngine struct {
	rules   []*secretRule
	global  []*secretAllow // the global allowlists
	kw      *kwMatcher
	kwRules [][]int    // keyword index -> rule indices
	wide    []int      // rule index -> lines a match may reach past the keyword's next line
	pre     []*rulePre // rule index -> cheap check, derived on first need (prefilter)
	always  []int      // rules with a regex and no keyword: run on everything
	// all holds the keywords of kw followed by the injection anchors, so
	// the pipeline finds both scanners' keywords in one pass (kwIndex).
	all *kwMatcher
}

// kwHit is one keyword occurrence: offset and keyword index.
type kwHit struct{ off, kw int32 }

// kwIndex finds the secrets keywords and the injection anchors of content
// in one pass; sec indexes e.kw's keywords, inj injAnchors' ones.
func (e *secretsEngine) kwIndex(content []byte) (sec, inj []kwHit) {
	n := len(e.kw.kws)
	e.all.find(content, func(off, k int) {
		if k < n {
			sec = append(sec, kwHit{int32(off), int32(k)})
		} else {
			inj = append(inj, kwHit{int32(off), int32(k - n)})
		}
	})
	return sec, inj
}

// findHits lists the occurrences of m's keywords in b.
func findHits(m *kwMatcher, b []byte) []kwHit {
	var out []kwHit
	m.find(b, func(off, k int) { out = append(out, kwHit{int32(off), int32(k)}) })
	return out
}

var (
	secretsOnce sync.Once
	secretsEng  *secretsEngine
	secretsErr  error
)

// sharedSecrets builds the engine once per process. Patterns are
// compiled on first need, not here.
func sharedSecrets() (*secretsEngine, error) {
	secretsOnce.Do(func() { secretsEng, secretsErr = newSecretsEngine(secretrules.Global, secretrules.Rules) })
	return secretsEng, secretsErr
}

func newSecretsEngine(global []secretrules.Allowlist, rules []secretrules.Rule) (*secretsEngine, error) {
	e := &secretsEngine{}
	for _, a := range global {
		e.global = append(e.global, newSecretAllow(a))
	}
	kwIndex := map[string]int{}
	var kws []string
	for _, tr := range rules {
		if tr.Regex == "" {
			continue // path-only rules (e.g. pkcs12 files): not content
		}
		ri := len(e.rules)
		r := newSecretRule(tr)
		e.rules = append(e.rules, r)
		e.addPrefilter(r)
		if len(r.Keywords) == 0 {
			e.always = append(e.always, ri)
			continue
		}
		for _, k := range r.Keywords {
			k = strings.ToLower(k)
			if len(k) < 2 {
				e.always = append(e.always, ri)
				break
			}
			ki, ok := kwIndex[k]
			if !ok {
				ki = len(kws)
				kwIndex[k] = ki
				kws = append(kws, k)
				e.kwRules = append(e.kwRules, nil)
			}
			e.kwRules[ki] = append(e.kwRules[ki], ri)
		}
	}
	e.kw = newKWMatcher(kws)
	injAnchors, _ := injAnchorTable()
	e.all = newKWMatcher(append(append([]string(nil), kws...), injAnchors.kws...))
	return e, nil
}

// rulePre is a rule's prefilter: its cheap necessary condition at a
// keyword (or nil), the keywords the check applies to, and for multi-line
// rules where a match must end (the evidence's line), or nil. Deriving it
// parses the rule's regex, so it is done for a rule on its first keyword
// hit: a process scanning a little tool output derives a few.
type rulePre struct {
	once    sync.Once
	check   func(b []byte, kwEnd int) bool
	checkKW map[string]bool
	reach   func(b []byte, kwEnd int) int
}

// addPrefilter appends the rule's window reach and its (not yet derived)
// prefilter to the engine's per-rule tables.
func (e *secretsEngine) addPrefilter(r *secretRule) {
	src := r.Regex.String()
	wide := 0
	switch {
	case strings.Contains(src, "-----"):
		wide = wideLines // PEM blocks
	case strings.Contains(src, `[\r\n]`), strings.Contains(src, `(?s`), strings.Contains(src, `\n`):
		wide = multiLines // e.g. "curl \" continued over lines, YAML blocks
	}
	e.wide = append(e.wide, wide)
	e.pre = append(e.pre, &rulePre{})
}

// hasReach reports whether rule ri's prefilter will carry a reach (a hand
// check with one), without deriving the prefilter.
func (e *secretsEngine) hasReach(ri int) bool {
	r := e.rules[ri]
	hc, ok := handChecks[r.RuleID]
	return ok && hc.reach != nil && hc.regex == r.Regex.String()
}

// prefilter returns rule ri's prefilter, deriving it on first use.
func (e *secretsEngine) prefilter(ri int) *rulePre {
	p := e.pre[ri]
	p.once.Do(func() {
		r := e.rules[ri]
		src := r.Regex.String()
		tmplKW := templateKeywords(src, r.Keywords)
		if hc, ok := handChecks[r.RuleID]; ok && hc.regex == src {
			p.check, p.checkKW, p.reach = hc.check, hc.keywords, hc.reach
			return
		}
		if tmplKW != nil {
			p.check, p.checkKW = assignmentCheck, tmplKW
			if sh, ok := templateSecretShape(src); ok {
				p.check = sh.check
			}
		}
	})
	return p
}

type secretsScanner struct{ e *secretsEngine }

// NewSecretsScanner returns the secrets scanner (gitleaks' default rules,
// internal/scan/secretrules). The rule set is loaded once per process.
func NewSecretsScanner() (Scanner, error) {
	e, err := sharedSecrets()
	if err != nil {
		return nil, err
	}
	return secretsScanner{e}, nil
}

func (secretsScanner) Name() string { return "secrets" }

// wideLines is how far a window reaches after the keyword line for rules
// whose matches span many lines (private key blocks).
const wideLines = 200

// multiLines is the reach, in newlines after the keyword, of rules whose
// matches may continue over a few lines: gitleaks' curl rules allow five
// continuations, each after one or two line breaks ([\r\n]{1,2}: a blank
// line between two continuation lines is one), so a match may end ten
// newlines past the keyword's line.
const multiLines = 11

// wideReach bounds multi-line windows in bytes (a private key block is a
// few KB).
const wideReach = 64 << 10

// A merged window longer than chunk bytes is read in chunks of that size
// overlapping by half (Go's regexp uses its fast backtracker only on short
// inputs, and a keyword-dense line must not cost a window per keyword):
// matches up to chunk/2 long are always inside one chunk. Rules reaching
// over lines use longer chunks; private-key windows are not chunked.
const (
	chunk     = 1024
	wideChunk = 4096
)

// On lines longer than windowBefore+windowAfter a single-line rule sees the
// bytes around its keyword only. A match reaching further is not seen, and
// the window's edge can end a match early (a possible false positive on
// such lines only).
const (
	windowBefore = 256
	windowAfter  = 1024
)

// The regular expressions of one scan may read at most
// max(minSecretsBudget, secretsBudgetFactor × content size) bytes of
// windows. Content dense enough in keywords to exceed it (a denial of
// service) fails the scan — which the pipeline reports as a critical
// finding in closed mode — instead of taking minutes.
const (
	minSecretsBudget    = 4 << 20
	secretsBudgetFactor = 24
)

func (s secretsScanner) Scan(ctx context.Context, content []byte, m Meta) ([]Finding, error) {
	if len(content) > maxIndexed {
		return nil, fmt.Errorf("content of %d bytes is too large to scan (limit %d)", len(content), maxIndexed)
	}
	return s.scanHits(ctx, content, m, findHits(s.e.kw, content))
}

// maxIndexed bounds content for the int32 offsets of kwHit.
const maxIndexed = 1<<31 - 1

// scanHits is Scan given the occurrences of the engine's keywords in
// content (in order).
func (s secretsScanner) scanHits(ctx context.Context, content []byte, m Meta, hits []kwHit) ([]Finding, error) {
	cands, err := s.candidates(ctx, content, m.Path, hits)
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	ln := newLines(content)
	var out []Finding
	var caps ruleCap
	type once struct {
		rule, line int
		secret     string
	}
	seen := map[once]bool{} // the excerpt masks every occurrence on the line
	for _, c := range cands {
		r := s.e.rules[c.rule]
		secret := c.secret
		if secret == "" {
			secret = c.match
		}
		line, col := ln.pos(c.at)
		if k := (once{c.rule, line, secret}); seen[k] {
			continue
		} else {
			seen[k] = true
		}
		id := RuleSecretPrefix + r.RuleID
		if !caps.take(id) {
			continue
		}
		out = append(out, Finding{
			Scanner: "secrets", Rule: id, Severity: Critical, Path: m.Path,
			Line: line, Column: col,
			Message: fmt.Sprintf("possible secret (%s); value withheld: %s", r.Description, maskSecret(secret)),
			Excerpt: redactedExcerpt(ln, c.at, c.at+len(secret), secret),
		})
		caps.keep(out[len(out)-1])
	}
	out = append(out, caps.summaries()...)
	sortFindings(out)
	return out, nil
}

type span struct{ start, end int }

// windows returns, per rule, the merged windows of content its regular
// expression must read (around the keyword hits its cheap check admits),
// and what is left of the work budget.
func (e *secretsEngine) windows(content []byte, hits []kwHit, budget int) (map[int][]span, int) {
	windows := make(map[int][]span) // rule -> merged windows in order
	addWin := func(ri, ws, we int) {
		w := windows[ri]
		// Merge overlapping windows; long unions are read in chunks.
		if n := len(w); n > 0 && ws <= w[n-1].end {
			if we > w[n-1].end {
				w[n-1].end = we
			}
			return
		}
		windows[ri] = append(w, span{ws, we})
	}
	var cur lineCursor
	cur.b = content
	for _, h := range hits {
		if budget < 0 {
			break
		}
		off, k := int(h.off), int(h.kw)
		ws, we := cur.at(off)
		kwEnd := off + len(e.kw.kws[k])
		for _, ri := range e.kwRules[k] {
			pf := e.prefilter(ri)
			if c := pf.check; c != nil && pf.checkKW[e.kw.kws[k]] {
				budget -= checkCost
				if pf.reach != nil {
					budget -= curlReach
				}
				if !c(content, kwEnd) {
					continue
				}
			}
			end := extendLines(content, we, e.wide[ri])
			if r := pf.reach; r != nil {
				if at := r(content, kwEnd); at >= 0 {
					end = max(we, lineEnd(content, at))
				}
			}
			if e.wide[ri] == 0 {
				// very long lines: a window around the keyword
				addWin(ri, max(ws, off-windowBefore), min(end, kwEnd+windowAfter))
			} else if e.wide[ri] == multiLines {
				addWin(ri, ws, min(end, kwEnd+curlReach))
			} else {
				addWin(ri, ws, min(end, kwEnd+wideReach))
			}
		}
	}
	for _, ri := range e.always {
		addWin(ri, 0, len(content))
	}
	return windows, budget
}

// wholeWindow is the longest window whose matches are taken from one
// FindAll over it (exactly gitleaks' matches, when the window starts at a
// line start); longer ones are read in chunks.
const wholeWindow = 64 << 10

// windowMatches returns the matches (absolute offsets) of re in the window
// w. The window is first tested chunk by chunk (size bytes, overlapping by
// half: Go's regexp uses its fast backtracker only on short inputs); only
// when a chunk matches are the matches listed, from one pass over the
// whole window when it is at most wholeWindow long, so that a greedy match
// reaching past a chunk's end is not cut short. Longer windows are listed
// chunk by chunk, skipping a match that ends at a chunk's end when the
// next chunk holds its start. Bytes read are charged to budget.
func windowMatches(re *regexp.Regexp, content []byte, w span, size int, budget *int) [][2]int {
	var out [][2]int
	whole := w.end-w.start <= wholeWindow
	for cs := w.start; ; cs += size / 2 {
		ce := min(w.end, cs+size)
		if *budget -= ce - cs; *budget < 0 {
			return nil
		}
		if re.Match(content[cs:ce]) {
			if whole {
				return wholeMatches(re, content, w, budget)
			}
			*budget -= ce - cs
			for _, loc := range re.FindAllIndex(content[cs:ce], -1) {
				ms, me := cs+loc[0], cs+loc[1]
				if me == ce && ce < w.end && ms >= cs+size/2 {
					continue // maybe cut short: the next chunk holds it whole
				}
				out = append(out, [2]int{ms, me})
			}
		}
		if ce == w.end {
			return out
		}
	}
}

// wholeMatches lists the matches of re in the window w. The window's end
// is an end of text for the regexp: a match ending there may hold only
// because of that (a rule ending in "$" or "\z"; gitleaks, reading the
// whole content, sees the newline that follows). So when one does, and
// content goes on, the window is read again with its next line, and the
// matches starting inside w are taken from that reading.
func wholeMatches(re *regexp.Regexp, content []byte, w span, budget *int) [][2]int {
	list := func(end int) [][2]int {
		*budget -= end - w.start
		var out [][2]int
		for _, loc := range re.FindAllIndex(content[w.start:end], -1) {
			if w.start+loc[0] < w.end {
				out = append(out, [2]int{w.start + loc[0], w.start + loc[1]})
			}
		}
		return out
	}
	out := list(w.end)
	if n := len(out); n > 0 && out[n-1][1] == w.end && w.end < len(content) {
		out = list(lineEnd(content, w.end+1))
	}
	return out
}

// candidates runs each rule's regular expression on its windows and
// returns the matches gitleaks would report, ordered by the secret's
// offset then rule.
func (s secretsScanner) candidates(ctx context.Context, content []byte, path string, hits []kwHit) ([]secretCand, error) {
	e := s.e
	for _, a := range e.global {
		if a.skipsPath(path) {
			return nil, nil // gitleaks skips the file
		}
	}
	limit := max(minSecretsBudget, secretsBudgetFactor*len(content))
	windows, budget := e.windows(content, hits, limit)
	tooDense := fmt.Errorf("content too dense in secret-like patterns to scan in bounded time (work budget of %d bytes exceeded)", limit)
	if budget < 0 {
		return nil, tooDense
	}
	st := &matchState{e: e, content: content, path: path, budget: &budget, ruleOK: map[int]bool{}}
	var cands []secretCand
	seen := map[[2]int]bool{} // rule, secret offset: chunks overlap
	for ri := range e.rules {
		ws := windows[ri]
		if len(ws) == 0 || !st.ruleApplies(ri) {
			continue
		}
		re := e.rules[ri].Regex.Get()
		size := chunk
		switch e.wide[ri] {
		case multiLines:
			size = wideChunk
		case wideLines:
			size = wideReach + wideChunk
		}
		for _, w := range ws {
			for _, loc := range windowMatches(re, content, w, size, &budget) {
				var c secretCand
				if st.candidate(ri, loc[0], loc[1], &c) && !seen[[2]int{ri, c.at}] {
					seen[[2]int{ri, c.at}] = true
					cands = append(cands, c)
				}
			}
			if budget < 0 {
				return nil, tooDense
			}
		}
		if budget < 0 {
			return nil, tooDense
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].at != cands[j].at {
			return cands[i].at < cands[j].at
		}
		return cands[i].rule < cands[j].rule
	})
	return dropShadowedGeneric(e, cands), nil
}

// The "semi-generic" shape most gitleaks rules are generated from:
//
//	[\w.-]{0,50}?(?:KEYWORDS)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)…SECRET…
//
// A match through the keyword group needs an assignment operator shortly
// after the keyword, with only [ \t\w.-\s'"] between them.
const (
	semiGenericMid = `(?:[ \t\w.-]{0,20})[\s'"]{0,3}`
	semiGenericOp  = `(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)`
	semiGenericPre = `[\w.-]{0,50}?(?:`
)

// templateKeywords returns the rule keywords for which assignmentCheck is a
// necessary condition, or nil. That holds when one top-level branch of the
// rule's regex has the semi-generic shape, the keyword is one of its group's
// alternatives, and every other branch contains, literally, a keyword that
// is not (so matches of other branches are still found through that keyword,
// unchecked).
func templateKeywords(src string, keywords []string) map[string]bool {
	branches := topLevelBranches(src)
	tmpl := -1
	var group string
	for i, b := range branches {
		mid := strings.Index(b, semiGenericMid)
		if mid < 0 {
			continue
		}
		after := strings.TrimPrefix(b[mid+len(semiGenericMid):], ")")
		pre := strings.LastIndex(b[:mid], semiGenericPre)
		if !strings.HasPrefix(after, semiGenericOp) || pre < 0 || tmpl >= 0 {
			return nil
		}
		tmpl, group = i, b[pre+len(semiGenericPre):mid]
		group = strings.TrimSuffix(group, ")")
	}
	if tmpl < 0 {
		return nil
	}
	gre, err := regexp.Compile(`^(?i:` + group + `)$`)
	if err != nil {
		return nil
	}
	inGroup := map[string]bool{}
	var others []string
	for _, k := range keywords {
		k = strings.ToLower(k)
		if gre.MatchString(k) {
			inGroup[k] = true
		} else {
			others = append(others, k)
		}
	}
	for i, b := range branches {
		if i == tmpl {
			continue
		}
		lb, ok := strings.ToLower(b), false
		for _, k := range others {
			if strings.Contains(lb, k) {
				ok = true
				break
			}
		}
		if !ok {
			return nil
		}
	}
	if len(inGroup) == 0 {
		return nil
	}
	return inGroup
}

// topLevelBranches splits a regular expression at its top-level '|'.
func topLevelBranches(src string) []string {
	var out []string
	start := 0
	walkRegexp(src, 0, func(i int, c byte, depth int) bool {
		if c == '|' && depth == 0 {
			out = append(out, src[start:i])
			start = i + 1
		}
		return true
	})
	return append(out, src[start:])
}

// groupEnd returns the offset after the ')' that closes the group opening
// at src[g], or -1.
func groupEnd(src string, g int) int {
	end := -1
	walkRegexp(src, g, func(j int, c byte, depth int) bool {
		if c == ')' && depth == 0 {
			end = j + 1
			return false
		}
		return true
	})
	return end
}

// walkRegexp walks the regular expression src from offset from, passing
// over escapes and character classes, and calls at with every other byte,
// its offset and the depth of parentheses after it (a '(' counts in, a
// ')' out), until at returns false.
func walkRegexp(src string, from int, at func(i int, c byte, depth int) bool) {
	depth, class := 0, false
	for i := from; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\\':
			i++
		case class:
			if c == ']' {
				class = false
			}
		case c == '[':
			class = true
			if i+1 < len(src) && src[i+1] == ']' {
				i++
			}
		default:
			switch c {
			case '(':
				depth++
			case ')':
				depth--
			}
			if !at(i, c, depth) {
				return
			}
		}
	}
}

// assignmentCheck: within 64 bytes after the keyword, an assignment operator
// reached over [ \t\w.-\s'"] only (64 > 20+3 leaves room for a group
// alternative longer than its keyword).
func assignmentCheck(b []byte, kwEnd int) bool {
	lim := min(len(b), kwEnd+64)
	for o := kwEnd; o < lim; o++ {
		switch c := b[o]; c {
		case '=', '>', ':', '|', '?', ',':
			return true
		default:
			if !(isWordByte(c) || c == '.' || c == '-' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == '\'' || c == '"') {
				return false
			}
		}
	}
	return false
}

// secretShape is what the secret group of a semi-generic rule needs: at
// least min bytes, each in class (any byte >= 0x80 is admitted: case
// folding reaches non-ASCII runes).
type secretShape struct {
	min   int
	class [256]bool
}

// semiGenericSkip is what the semi-generic shape allows between the
// operator and the secret group.
const semiGenericSkip = `[\x60'"\s=]{0,5}(`

// templateSecretShape derives the shape of the secret group of a rule's
// semi-generic branch (the capture right after the operator), or false
// when the rule does not have that form or the group is not understood.
func templateSecretShape(src string) (secretShape, bool) {
	var sh secretShape
	i := strings.Index(src, semiGenericOp+semiGenericSkip)
	if i < 0 || strings.Count(src, semiGenericOp) != 1 {
		return sh, false
	}
	g := i + len(semiGenericOp) + len(semiGenericSkip) - 1 // the '('
	if g+1 >= len(src) || src[g+1] == '?' {
		return sh, false
	}
	end := groupEnd(src, g)
	if end < 0 {
		return sh, false
	}
	flags := ""
	if strings.HasPrefix(src, "(?i)") {
		flags = "(?i)"
	}
	if strings.Count(src, "(?i)") != len(flags)/4 {
		return sh, false // a flag set mid-way: not modelled
	}
	re, err := syntax.Parse(flags+src[g:end], syntax.Perl)
	if err != nil {
		return sh, false
	}
	n, ok := shapeOf(re, &sh.class)
	if !ok || n < 1 {
		return sh, false
	}
	sh.min = n
	for c := 0x80; c < 0x100; c++ {
		sh.class[c] = true
	}
	return sh, true
}

// shapeOf returns the minimum length in runes of re's matches and adds the
// ASCII bytes they may contain to class; false for constructs it does not
// model.
func shapeOf(re *syntax.Regexp, class *[256]bool) (int, bool) {
	addRune := func(r rune) {
		if r < 0x80 {
			class[r] = true
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			addRune(r)
			if re.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					addRune(f)
				}
			}
		}
		return len(re.Rune), true
	case syntax.OpCharClass:
		for k := 0; k+1 < len(re.Rune); k += 2 {
			for r := re.Rune[k]; r <= re.Rune[k+1] && r < 0x80; r++ {
				addRune(r)
			}
		}
		return 1, true
	case syntax.OpEmptyMatch, syntax.OpBeginText, syntax.OpEndText, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0, true
	case syntax.OpCapture, syntax.OpPlus:
		return shapeOf(re.Sub[0], class)
	case syntax.OpStar, syntax.OpQuest:
		_, ok := shapeOf(re.Sub[0], class)
		return 0, ok
	case syntax.OpRepeat:
		n, ok := shapeOf(re.Sub[0], class)
		return n * re.Min, ok
	case syntax.OpConcat:
		total := 0
		for _, sub := range re.Sub {
			n, ok := shapeOf(sub, class)
			if !ok {
				return 0, false
			}
			total += n
		}
		return total, true
	case syntax.OpAlternate:
		least := -1
		for _, sub := range re.Sub {
			n, ok := shapeOf(sub, class)
			if !ok {
				return 0, false
			}
			if least < 0 || n < least {
				least = n
			}
		}
		return least, true
	}
	return 0, false
}

// check is assignmentCheck plus the secret: after the first operator
// character (operators are at most four bytes, then up to five quotes,
// spaces or '='), a run of at least min bytes of the secret's class.
func (sh *secretShape) check(b []byte, kwEnd int) bool {
	lim := min(len(b), kwEnd+64)
	for o := kwEnd; o < lim; o++ {
		switch c := b[o]; c {
		case '=', '>', ':', '|', '?', ',':
			if !opStart(b, o) {
				continue
			}
			for s := o + 1; s <= o+9 && s < len(b); s++ {
				n := 0
				for s+n < len(b) && sh.class[b[s+n]] && n < sh.min {
					n++
				}
				if n >= sh.min {
					return true
				}
				if !opSkip(b[s]) {
					break // the secret starts at the first other byte
				}
			}
			continue
		default:
			if !(isWordByte(c) || c >= 0x80 || c == '.' || c == '-' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == '\'' || c == '"') {
				return false
			}
		}
	}
	return false
}

// opStart reports whether an operator of the semi-generic shape
// (=|>|:{1,3}=|\|\||:|=>|\?=|,) can start at b[o]: '|' only as "||", '?'
// only as "?=".
func opStart(b []byte, o int) bool {
	switch b[o] {
	case '|':
		return o+1 < len(b) && b[o+1] == '|'
	case '?':
		return o+1 < len(b) && b[o+1] == '='
	}
	return true
}

// opSkip reports whether c may sit between an operator's first byte and
// the secret: the rest of the operator or [\x60'"\s=].
func opSkip(c byte) bool {
	switch c {
	case '=', '>', ':', '|', '?', ',', '`', '\'', '"', ' ', '\t', '\n', '\r', '\f', '\v':
		return true
	}
	return false
}

// handChecks are necessary conditions written for hot rules whose keywords
// are common in prose. Each is used only while the loaded rule's regex is
// exactly the one it was derived from, and only at hits of the listed
// keywords.
var handChecks = map[string]struct {
	regex    string
	keywords map[string]bool
	check    func(b []byte, kwEnd int) bool
	// reach, if set, returns the offset the match needs to reach (a line
	// further down), so the window stops at that line instead of the
	// rule's full multi-line reach.
	reach func(b []byte, kwEnd int) int
}{
	"generic-api-key": {genericAPIKeyRegex, map[string]bool{"access": true, "api": true, "auth": true, "key": true, "credential": true, "creds": true, "passwd": true, "password": true, "secret": true, "token": true}, genericAPIKeyCheck, nil},
	// \b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))…: "s." needs 24
	// alphanumerics after it, "hvs." 90 of [\w-].
	"vault-service-token": {`\b((?:hvs\.[\w-]{90,120}|s\.(?i:[a-z0-9]{24})))(?:[\x60'"\s;]|\\[nr]|$)`, map[string]bool{"s.": true, "hvs.": true},
		func(b []byte, kwEnd int) bool {
			if kwEnd >= 4 && bytes.EqualFold(b[kwEnd-4:kwEnd], []byte("hvs.")) && runAfter(b, kwEnd, func(c byte) bool { return isWordByte(c) || c == '-' }) >= 90 {
				return true
			}
			return runAfter(b, kwEnd, isAlnum) >= 24
		}, nil},
	// \b(ey[a-zA-Z0-9]{17,}\.ey…: 17 alphanumerics then a dot.
	"jwt": {`\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?)(?:[\x60'"\s;]|\\[nr]|$)`, map[string]bool{"ey": true},
		func(b []byte, kwEnd int) bool {
			n := runAfter(b, kwEnd, isAlnum)
			return n >= 17 && kwEnd+n < len(b) && b[kwEnd+n] == '.'
		}, nil},
	// curl … -H/--header "Authorization: …" or "…Key: …"/"…Token: …": a
	// header flag followed by such a header name within the reach of the
	// rule (five continuation lines).
	"curl-auth-header": {curlAuthHeaderRegex, map[string]bool{"curl": true},
		func(b []byte, kwEnd int) bool {
			// the flag literally, before the regular expression
			return findAfter(b, kwEnd, curlHeaderFlag) >= 0
		},
		func(b []byte, kwEnd int) int { return lastAfter(b, kwEnd, curlHeaderFlag) }},
	// curl … -u/--user CREDS: a user flag after whitespace.
	"curl-auth-user": {curlAuthUserRegex, map[string]bool{"curl": true},
		func(b []byte, kwEnd int) bool {
			return findAfter(b, kwEnd, curlUserFlag) >= 0
		},
		func(b []byte, kwEnd int) int { return lastAfter(b, kwEnd, curlUserFlag) }},
	// kind: secret … data: (either order, within the rule's 300 bytes).
	"kubernetes-secret-yaml": {kubeSecretRegex, map[string]bool{"secret": true},
		func(b []byte, kwEnd int) bool {
			w := b[max(0, kwEnd-512):min(len(b), kwEnd+512)]
			return containsFold(w, "kind:") && containsFold(w, "data:")
		}, nil},
	// SK[0-9a-fA-F]{32}: upper-case SK and 32 hex digits.
	"twilio-api-key": {`SK[0-9a-fA-F]{32}`, map[string]bool{"sk": true},
		func(b []byte, kwEnd int) bool {
			return b[kwEnd-2] == 'S' && b[kwEnd-1] == 'K' && runAfter(b, kwEnd, isHex) >= 32
		}, nil},
}

const (
	curlAuthHeaderRegex = `\bcurl\b(?:.*?|.*?(?:[\r\n]{1,2}.*?){1,5})[ \t\n\r](?:-H|--header)(?:=|[ \t]{0,5})(?:"(?i)(?:Authorization:[ \t]{0,5}(?:Basic[ \t]([a-z0-9+/]{8,}={0,3})|(?:Bearer|(?:Api-)?Token)[ \t]([\w=~@.+/-]{8,})|([\w=~@.+/-]{8,}))|(?:(?:X-(?:[a-z]+-)?)?(?:Api-?)?(?:Key|Token)):[ \t]{0,5}([\w=~@.+/-]{8,}))"|'(?i)(?:Authorization:[ \t]{0,5}(?:Basic[ \t]([a-z0-9+/]{8,}={0,3})|(?:Bearer|(?:Api-)?Token)[ \t]([\w=~@.+/-]{8,})|([\w=~@.+/-]{8,}))|(?:(?:X-(?:[a-z]+-)?)?(?:Api-?)?(?:Key|Token)):[ \t]{0,5}([\w=~@.+/-]{8,}))')(?:\B|\s|\z)`
	curlAuthUserRegex   = `\bcurl\b(?:.*|.*(?:[\r\n]{1,2}.*){1,5})[ \t\n\r](?:-u|--user)(?:=|[ \t]{0,5})("(:[^"]{3,}|[^:"]{3,}:|[^:"]{3,}:[^"]{3,})"|'([^:']{3,}:[^']{3,})'|((?:"[^"]{3,}"|'[^']{3,}'|[\w$@.-]+):(?:"[^"]{3,}"|'[^']{3,}'|[\w${}@.-]+)))(?:\s|\z)`
	kubeSecretRegex     = `(?i)(?:\bkind:[ \t]*["']?\bsecret\b["']?(?s:.){0,200}?\bdata:(?s:.){0,100}?\s+([\w.-]+:(?:[ \t]*(?:\||>[-+]?)\s+)?[ \t]*(?:["']?[a-z0-9+/]{10,}={0,3}["']?|\{\{[ \t\w"|$:=,.-]+}}|""|''))|\bdata:(?s:.){0,100}?\s+([\w.-]+:(?:[ \t]*(?:\||>[-+]?)\s+)?[ \t]*(?:["']?[a-z0-9+/]{10,}={0,3}["']?|\{\{[ \t\w"|$:=,.-]+}}|""|''))(?s:.){0,200}?\bkind:[ \t]*["']?\bsecret\b["']?)`
)

// curlFlag is a curl option followed by what the rule needs after it. re
// starts with [ \t\n\r] and then -<short> or <long> (case-sensitive), so
// a match can only start right before a '-' that begins one of them; at
// such places only, the anchored copy of re is tried.
type curlFlag struct {
	re    *lazyre.Regexp
	short byte
	long  string
}

func newCurlFlag(short byte, long, rest string) *curlFlag {
	return &curlFlag{
		re:    lazyre.New(`^[ \t\n\r](?:-` + string(short) + `|` + long + `)` + rest),
		short: short,
		long:  long,
	}
}

var (
	curlHeaderFlag = newCurlFlag('H', "--header", `(?:=|[ \t]{0,5})["'](?i:authorization:|(?:x-(?:[a-z]+-)?)?(?:api-?)?(?:key|token):)`)
	curlUserFlag   = newCurlFlag('u', "--user", `(?:=|[ \t]{0,5})["'\w$@.:-]`)
)

// matches calls fn with the end of each successive non-overlapping match
// of f in r (as regexp's FindAll would), until fn returns false.
func (f *curlFlag) matches(r []byte, fn func(end int) bool) {
	for j := 1; j < len(r); j++ {
		k := bytes.IndexByte(r[j:], '-')
		if k < 0 {
			return
		}
		j += k
		if c := r[j-1]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			continue
		}
		if !(j+1 < len(r) && r[j+1] == f.short) && !bytes.HasPrefix(r[j:], []byte(f.long)) {
			continue
		}
		if loc := f.re.FindIndex(r[j-1:]); loc != nil {
			end := j - 1 + loc[1]
			if !fn(end) {
				return
			}
			j = end // the next match starts at or after end: j++ follows
		}
	}
}

// curlReach bounds how far after "curl" the curl checks look (the rule
// allows five continuation lines; on longer text only this much is read).
// checkCost is what any other check is charged against the scan budget.
const (
	curlReach = 2048
	checkCost = 64
)

func curlEnd(b []byte, kwEnd int) int {
	return min(extendLines(b, kwEnd, multiLines), kwEnd+curlReach)
}

// findAfter returns the end of the first match of re in the reach of a curl
// rule after kwEnd (the rest of the line and multiLines-1 more), or -1.
func findAfter(b []byte, kwEnd int, f *curlFlag) int {
	at := -1
	f.matches(b[kwEnd:curlEnd(b, kwEnd)], func(end int) bool { at = kwEnd + end; return false })
	return at
}

// lastAfter returns the end of the last match of re in the reach of a curl
// rule after kwEnd, or -1: a match of the rule ends on or before the line
// holding it (the flag and its value sit on one line).
func lastAfter(b []byte, kwEnd int, f *curlFlag) int {
	at := -1
	f.matches(b[kwEnd:curlEnd(b, kwEnd)], func(end int) bool { at = kwEnd + end; return true })
	return at
}

func containsFold(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if lowerTable[b[i]] == s[0] && bytes.EqualFold(b[i:i+len(s)], []byte(s)) {
			return true
		}
	}
	return false
}

func runAfter(b []byte, at int, class func(byte) bool) int {
	n := 0
	for at+n < len(b) && class(b[at+n]) {
		n++
	}
	return n
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isHex(c byte) bool { return c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c >= '0' && c <= '9' }

// genericAPIKeyRegex is gitleaks v8.30.1's generic-api-key pattern. Its
// prefilter below is derived from it and used only while the loaded rule is
// exactly this pattern.
const genericAPIKeyRegex = `(?i)[\w.-]{0,50}?(?:access|auth|(?-i:[Aa]pi|API)|credential|creds|key|passw(?:or)?d|secret|token)(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})(?:[\x60'"\s;]|\\[nr]|$)`

// genericAPIKeyCheck is a necessary condition for genericAPIKeyRegex to
// match with its keyword ending at kwEnd: within 23 bytes an assignment
// operator (= > : | ? ,) preceded only by [ \t\w.-\s'"], and within 10 bytes
// after it a run of [\w.=+/-] (both secret forms are such runs) with at
// least 12 distinct bytes (see secretRunDistinct). The generic rule's keywords are common English words; without
// this the rule's large case-insensitive regex would run on most lines.
func genericAPIKeyCheck(b []byte, kwEnd int) bool {
	lim := min(len(b), kwEnd+24)
	for o := kwEnd; o < lim; o++ {
		c := b[o]
		switch c {
		case '=', '>', ':', '|', '?', ',':
			if !opStart(b, o) {
				continue
			}
			for s := o + 1; s <= o+10 && s < len(b); s++ {
				if secretRunDistinct(b, s) >= 12 {
					return true
				}
				if !opSkip(b[s]) {
					break // the secret starts at the first other byte
				}
			}
			continue // a longer operator (":=", "=>", "||") or a miss
		}
		if !(isWordByte(c) || c == '.' || c == '-' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == '\'' || c == '"') {
			return false
		}
	}
	return false
}

// secretRunDistinct counts the distinct bytes in the run of [\w.=+/-]
// starting at s. The rule's secret is a substring of such a run and must
// have Shannon entropy above 3.5 bits, which needs more than 2^3.5 ≈ 11.3
// distinct characters.
func secretRunDistinct(b []byte, s int) int {
	var seen [256]bool
	n := 0
	for i := s; i < len(b) && i < s+150 && secretByte(b[i]); i++ {
		if !seen[b[i]] {
			seen[b[i]] = true
			n++
		}
	}
	return n
}

func secretByte(c byte) bool {
	return isWordByte(c) || c == '.' || c == '=' || c == '-' || c == '+' || c == '/'
}

// lineCursor gives the bounds of the line holding an offset, in amortised constant time for non-decreasing offsets
// (a keyword-dense single line must not cost a scan back per keyword).
type lineCursor struct {
	b          []byte
	start, end int // current line [start, end)
	valid      bool
}

func (c *lineCursor) at(off int) (int, int) {
	if !c.valid || off < c.start || off > c.end {
		if c.valid && off > c.end {
			c.start = c.end + 1
			if i := bytes.LastIndexByte(c.b[c.start:off], '\n'); i >= 0 {
				c.start += i + 1
			}
		} else {
			c.start = bytes.LastIndexByte(c.b[:off], '\n') + 1
		}
		c.end = len(c.b)
		if i := bytes.IndexByte(c.b[off:], '\n'); i >= 0 {
			c.end = off + i
		}
		c.valid = true
	}
	return c.start, c.end
}

// lineEnd returns the offset of the end of the line holding off.
func lineEnd(b []byte, off int) int {
	if i := bytes.IndexByte(b[off:], '\n'); i >= 0 {
		return off + i
	}
	return len(b)
}

// extendLines returns the offset of the end of the n-th line after off.
func extendLines(b []byte, off, n int) int {
	for ; n > 0 && off < len(b); n-- {
		i := bytes.IndexByte(b[off+1:], '\n')
		if i < 0 {
			return len(b)
		}
		off += 1 + i
	}
	return off
}

// maskSecret shows at most the first four characters of a secret of 16 or
// more characters (enough to recognise a token type, e.g. "ghp_"), and its
// length; shorter secrets show nothing.
func maskSecret(s string) string {
	n := utf8.RuneCountInString(s)
	if n >= 16 {
		return fmt.Sprintf("%s… (%d characters)", visibleString(string(takeRunes([]byte(s), 4))), n)
	}
	return fmt.Sprintf("(%d characters)", n)
}

// redactedExcerpt is the excerpt of the line holding content[start:) with
// every occurrence of the secret on it replaced by its mask.
func redactedExcerpt(ln *lines, start, end int, secret string) string {
	ls, le := ln.bounds(ln.lineOf(start))
	mask := []byte("<redacted " + maskSecret(secret) + ">")
	line := ln.content[ls:le]
	first := secret
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = first[:i] // multi-line secret: mask its first line
	}
	if first != "" {
		line = bytes.ReplaceAll(line, []byte(first), mask)
	}
	at := bytes.Index(line, mask)
	if at < 0 {
		at = 0
	}
	sub := newLines(line)
	return sub.excerpt(at, at+len(mask))
}
