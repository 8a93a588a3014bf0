package scan

import (
	"bytes"
	"context"
	"math"
	"sort"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/lazyre"
	"github.com/fullsend-ai/fullsend/internal/scan/secretrules"
)

// secretRule is one gitleaks rule as the matcher applies it. Its patterns
// are compiled on first need: a process scanning a few hundred bytes of
// tool output compiles only the rules whose keywords it holds.
type secretRule struct {
	RuleID      string
	Description string
	Regex       *lazyre.Regexp
	SecretGroup int
	Entropy     float64
	Keywords    []string
	path        *lazyre.Regexp // nil: any path
	allow       []*secretAllow
}

// secretAllow is one allowlist. regexes and paths are joined into one
// pattern the way gitleaks joins them, "(?:a|b|…)", so an inline flag such
// as (?i) at the start of one entry reaches the entries after it, as in
// gitleaks.
type secretAllow struct {
	and     bool
	target  string // "", "match" or "line"
	regexes *lazyre.Regexp
	paths   *lazyre.Regexp
	stop    []string // lower case
}

func newSecretRule(r secretrules.Rule) *secretRule {
	sr := &secretRule{
		RuleID: r.ID, Description: r.Description, SecretGroup: r.SecretGroup,
		Entropy: r.Entropy, Keywords: r.Keywords,
	}
	if r.Regex != "" {
		sr.Regex = lazyre.New(r.Regex)
	}
	if r.Path != "" {
		sr.path = lazyre.New(r.Path)
	}
	for _, a := range r.Allowlists {
		sr.allow = append(sr.allow, newSecretAllow(a))
	}
	return sr
}

func newSecretAllow(a secretrules.Allowlist) *secretAllow {
	join := func(ps []string) *lazyre.Regexp {
		if len(ps) == 0 {
			return nil
		}
		return lazyre.New("(?:" + strings.Join(ps, "|") + ")")
	}
	return &secretAllow{and: a.And, target: a.RegexTarget, regexes: join(a.Regexes), paths: join(a.Paths), stop: a.StopWords}
}

func (a *secretAllow) pathAllowed(path string) bool {
	return path != "" && a.paths != nil && a.paths.MatchString(path)
}

// skipsPath: the allowlist exempts the whole file at path (gitleaks checks
// this before reading content): an "or" allowlist whose path matches, or
// an "and" allowlist with paths only, all matching.
func (a *secretAllow) skipsPath(path string) bool {
	if path == "" {
		return false
	}
	if a.and {
		return a.regexes == nil && len(a.stop) == 0 && (a.paths == nil || a.pathAllowed(path))
	}
	return a.pathAllowed(path)
}

// allows: the allowlist exempts this candidate. Regexes see the secret,
// the match or the line (regexTarget); stop words are looked for in the
// lower-cased secret. "or" allowlists consider regexes and stop words only
// (their paths were applied by skipsPath); "and" ones need every check
// they have.
func (a *secretAllow) allows(path string, c *secretCand, line func() string) bool {
	target := c.secret
	switch a.target {
	case "match":
		target = c.match
	case "line":
		target = line()
	}
	regexOK := a.regexes != nil && target != "" && a.regexes.MatchString(target)
	stopOK := len(a.stop) > 0 && c.secret != "" && containsAny(strings.ToLower(c.secret), a.stop)
	if !a.and {
		return regexOK || stopOK
	}
	return (a.paths == nil || a.pathAllowed(path)) && (a.regexes == nil || regexOK) && (len(a.stop) == 0 || stopOK)
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// secretCand is one match of a rule: the match (newlines trimmed at both
// ends, as gitleaks does), the secret chosen from its groups, and where
// they are.
type secretCand struct {
	rule      int
	start     int // offset of the match in the content
	matchLine int // 0-based line of start, as gitleaks counts it
	at        int // offset of the secret (of the trimmed match when the secret is empty)
	match     string
	secret    string
}

// matchState is what one scan's matcher shares across rules: the content,
// its path and the rest of the work budget.
type matchState struct {
	e       *secretsEngine
	content []byte
	path    string
	budget  *int
	ruleOK  map[int]bool
}

// A "gitleaks:allow" comment on a finding's line suppresses it in gitleaks;
// here it does not. fullsend scans content written by others (remote
// resources, agent output through the redaction hook), so a mark the
// content carries cannot vouch for it: an injected agent could append it to
// carry a secret past redaction. Findings are accepted only by the fullsend
// dir's scan-accept.yaml, bound to their exact bytes.

// ruleApplies: the rule may report in this file (its path filter matches
// and none of its allowlists exempts the path).
func (s *matchState) ruleApplies(ri int) bool {
	if ok, done := s.ruleOK[ri]; done {
		return ok
	}
	r := s.e.rules[ri]
	ok := r.path == nil || r.path.MatchString(s.path)
	for _, a := range r.allow {
		ok = ok && !a.skipsPath(s.path)
	}
	s.ruleOK[ri] = ok
	return ok
}

// candidate applies what gitleaks applies to one regex match
// content[start:end) of rule ri (except the gitleaks:allow mark, see
// above): trim newlines, the secret group, the entropy floor, the global then the rule's
// allowlists. It returns false when the match is not reported.
func (s *matchState) candidate(ri, start, end int, c *secretCand) bool {
	r := s.e.rules[ri]
	raw := string(s.content[start:end])
	trimmed := strings.Trim(raw, "\n")
	lead := len(raw) - len(strings.TrimLeft(raw, "\n"))
	// gitleaks places the trimmed match at the untrimmed start.
	line, ls, le := gitleaksLine(s.content, start, start+len(trimmed))
	*c = secretCand{rule: ri, start: start, matchLine: line, at: start + lead, match: trimmed, secret: trimmed}
	if g := r.Regex.Get().FindStringSubmatchIndex(trimmed); len(g) >= 4 {
		if r.SecretGroup > 0 {
			if len(g)/2 <= r.SecretGroup {
				return false
			}
			c.secret, c.at = "", start+lead
			if a, b := g[2*r.SecretGroup], g[2*r.SecretGroup+1]; a >= 0 {
				c.secret, c.at = trimmed[a:b], start+lead+a
			}
		} else {
			for k := 2; k < len(g); k += 2 {
				if g[k] >= 0 && g[k+1] > g[k] {
					c.secret, c.at = trimmed[g[k]:g[k+1]], start+lead+g[k]
					break
				}
			}
		}
	}
	if r.Entropy != 0 && gitleaksEntropy(c.secret) <= r.Entropy {
		return false
	}
	lineText := func() string {
		*s.budget -= le - ls
		return string(s.content[ls:le])
	}
	for _, a := range s.e.global {
		if a.allows(s.path, c, lineText) {
			return false
		}
	}
	for _, a := range r.allow {
		if a.allows(s.path, c, lineText) {
			return false
		}
	}
	return true
}

// gitleaksLine returns the 0-based line of the match content[s:e) and the
// bounds of what gitleaks calls its line, computed as gitleaks computes
// them for a fragment holding the whole content: the line starts at the
// newline before the match (0 on the first line) and ends at the newline
// closing the line that holds e; a match starting after the last newline
// gets a "line" from the start of content to the end of its own line.
func gitleaksLine(c []byte, s, e int) (line, ls, le int) {
	first, fake := bytes.IndexByte(c, '\n'), false
	if first < 0 {
		first, fake = len(c), true // gitleaks pretends a newline at the end
	}
	set := false
	if s < first {
		set, line, ls, le = true, 0, 0, first
	} else if !fake && s < len(c) {
		if i := bytes.IndexByte(c[s+1:], '\n'); i >= 0 {
			set, le = true, s+1+i
			ls = bytes.LastIndexByte(c[:s+1], '\n')
			line = bytes.Count(c[:le], []byte{'\n'})
		}
	}
	if !set {
		line = bytes.Count(c, []byte{'\n'})
		if fake {
			line = 1
		}
		le = e
		for le < len(c) && c[le] != '\n' && c[le] != '\r' {
			le++
		}
		return line, 0, le
	}
	switch {
	case e <= 0:
	case e <= first:
		le = first
	case !fake:
		if i := bytes.IndexByte(c[e:], '\n'); i >= 0 {
			le = e + i
		}
	}
	return line, ls, max(le, e)
}

// gitleaksEntropy is gitleaks' Shannon entropy: symbol frequencies count
// runes but are divided by the length in bytes. (gitleaks sums in map
// order; we sum in rune order, which can differ in the last bit only.)
func gitleaksEntropy(s string) float64 {
	if s == "" {
		return 0
	}
	var ascii [128]int
	var other map[rune]int
	for _, r := range s {
		if r < 128 {
			ascii[r]++
		} else {
			if other == nil {
				other = map[rune]int{}
			}
			other[r]++
		}
	}
	inv := 1.0 / float64(len(s))
	h := 0.0
	add := func(n int) {
		if n > 0 {
			f := float64(n) * inv
			h -= f * math.Log2(f)
		}
	}
	for _, n := range ascii {
		add(n)
	}
	keys := make([]rune, 0, len(other))
	for r := range other {
		keys = append(keys, r)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, r := range keys {
		add(other[r])
	}
	return h
}

// dropShadowedGeneric removes, as gitleaks' report filter does, a finding
// of a rule whose id contains "generic" when a finding of a non-generic
// rule starts on the same line and its secret contains this secret.
func dropShadowedGeneric(e *secretsEngine, cands []secretCand) []secretCand {
	generic := func(ri int) bool { return strings.Contains(strings.ToLower(e.rules[ri].RuleID), "generic") }
	byLine := map[int][]int{} // line -> non-generic candidates
	for i, c := range cands {
		if !generic(c.rule) {
			byLine[c.matchLine] = append(byLine[c.matchLine], i)
		}
	}
	out := cands[:0:0]
	for _, c := range cands {
		shadowed := false
		if generic(c.rule) {
			for _, j := range byLine[c.matchLine] {
				if o := cands[j]; o.rule != c.rule && strings.Contains(o.secret, c.secret) {
					shadowed = true
					break
				}
			}
		}
		if !shadowed {
			out = append(out, c)
		}
	}
	return out
}

// SecretMatch is one detection of the secrets scanner before the per-rule
// cap and redaction. It exists for the differential test against gitleaks
// (internal/scan/gitleaksdiff).
type SecretMatch struct {
	Rule       string // gitleaks rule id
	Line       int    // 1-based line where the rule's match starts (gitleaks' line)
	SecretLine int    // 1-based line of the secret (Finding.Line)
	Secret     string
}

// SecretMatches runs the secrets scanner's matcher on content as the file
// at path and returns its detections, ordered by offset then rule.
func SecretMatches(ctx context.Context, content []byte, path string) ([]SecretMatch, error) {
	e, err := sharedSecrets()
	if err != nil {
		return nil, err
	}
	cands, err := secretsScanner{e}.candidates(ctx, content, path, findHits(e.kw, content))
	if err != nil {
		return nil, err
	}
	ln := newLines(content)
	out := make([]SecretMatch, 0, len(cands))
	for _, c := range cands {
		line, _ := ln.pos(c.at)
		out = append(out, SecretMatch{Rule: e.rules[c.rule].RuleID, Line: c.matchLine + 1, SecretLine: line, Secret: c.secret})
	}
	return out, nil
}
