package scan

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/lazyre"
)

// RuleCrossFile is an injection that only reads as one when a file that
// defers to a companion file of the same skill ("follow notes.md exactly")
// is read with the companion's text in place of its name.
const RuleCrossFile = "injection/cross-file"

// deferralCue is a line that hands control to another file.
var deferralCue = lazyre.New(`(?i)\b(?:follow|obey|execute|run|carry\s+out|apply|do\s+(?:what|whatever|everything|as)|comply\s+with|act\s+on|steps?\s+(?:in|from)|instructions?\s+(?:in|from)|as\s+(?:described|written|stated)\s+in|take\s+precedence|overrides?|supersedes?|replaces?)\b`)

// maxCompanionLines bounds the lines of a companion read per deferral.
const maxCompanionLines = 400

// crossFile judges the files of one unit (a skill directory) together: for
// every line of a file that names another file of the unit next to a
// deferral cue, each line of that companion is put in place of its name
// and the result read by the injection scanner. A critical finding there
// that the companion does not have alone is reported at the name, in the
// deferring file. names are the files' paths in the unit; skip says which
// companions already have a critical finding of their own.
func crossFile(ctx context.Context, files map[string][]byte, names []string, skip map[string]bool, m Meta) ([]Finding, error) {
	if len(files) < 2 {
		return nil, nil
	}
	var out []Finding
	inj := injectionScanner{}
	for _, n := range names {
		content := files[n]
		ln := newLines(content)
		for _, c := range names {
			if c == n || skip[c] {
				continue
			}
			for _, ref := range fileRefs(content, n, c) {
				ls, le := lineBounds(content, ref[0])
				line := content[ls:le]
				if !deferralCue.Match(line) {
					continue
				}
				f, err := judgeTogether(ctx, inj, line, ref[0]-ls, ref[1]-ls, files[c])
				if err != nil || f == nil {
					if err != nil {
						return nil, err
					}
					continue
				}
				l, col := ln.pos(ref[0])
				out = append(out, Finding{Scanner: "injection", Rule: RuleCrossFile, Severity: Critical,
					Path: joinPath(m.Path, n), Line: l, Column: col, Excerpt: ln.excerpt(ref[0], ref[1]),
					Message: fmt.Sprintf("defers to %s, and read together they are %s (%s): %s", c, injRuleWhat(f.Rule), f.Rule, f.Message)})
			}
		}
	}
	sortFindings(out)
	return out, nil
}

// judgeTogether reads line with each line of companion in place of
// line[s:e] and returns the first critical finding, or nil. Companion
// lines with a finding of their own are left out.
func judgeTogether(ctx context.Context, inj injectionScanner, line []byte, s, e int, companion []byte) (*Finding, error) {
	rest := companion
	for k := 0; k < maxCompanionLines && len(rest) > 0; k++ {
		cl, tail, _ := bytes.Cut(rest, []byte("\n"))
		rest = tail
		if len(bytes.TrimSpace(cl)) == 0 {
			continue
		}
		// A line with a finding of its own was judged in its context
		// (documentation in a fence, a quoted example): keep that verdict.
		if own, err := inj.Scan(ctx, cl, Meta{}); err != nil || len(own) > 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		joined := make([]byte, 0, len(line)+len(cl))
		joined = append(append(append(joined, line[:s]...), cl...), line[e:]...)
		fs, err := inj.Scan(ctx, joined, Meta{})
		if err != nil {
			return nil, err
		}
		for i := range fs {
			if fs[i].Severity == Critical {
				return &fs[i], nil
			}
		}
	}
	return nil, nil
}

// fileRefs returns the [start, end) ranges where content (the file named
// from) names the file c of the same unit: its path relative to from's
// directory or to the unit, with or without "./".
func fileRefs(content []byte, from, c string) [][2]int {
	rel := c
	if d := path.Dir(from); d != "." && strings.HasPrefix(c, d+"/") {
		rel = strings.TrimPrefix(c, d+"/")
	}
	var out [][2]int
	seen := map[int]bool{}
	for _, name := range []string{c, rel} {
		for off := 0; ; {
			i := bytes.Index(content[off:], []byte(name))
			if i < 0 {
				break
			}
			s := off + i
			e := s + len(name)
			off = e
			// a whole name: not part of a longer file name
			if s > 0 && (isWordByte(content[s-1]) || content[s-1] == '-') || e < len(content) && (isWordByte(content[e]) || content[e] == '-') {
				continue
			}
			if !seen[s] {
				seen[s] = true
				out = append(out, [2]int{s, e})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// injRuleWhat names an injection rule for messages.
func injRuleWhat(id string) string {
	for _, r := range injRules {
		if r.id == id {
			return r.what
		}
	}
	switch id {
	case RuleHiddenComment:
		return "a hidden comment"
	case RuleBase64:
		return "a base64 payload"
	}
	return id
}
