package scan

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// lines maps byte offsets of one content to 1-based line and rune column.
// It is built lazily and only as far as asked: most content produces no
// finding, or few near the start.
type lines struct {
	content []byte
	starts  []int // byte offset of the first byte of every line found so far
	done    bool  // starts holds every line
	// last position computed: pos counts runes from there when the next
	// offset is further along the same line (findings come in order).
	lastOff, lastLine, lastCol int
}

func newLines(content []byte) *lines { return &lines{content: content} }

// grow finds line starts until one lies beyond off or the content ends.
func (l *lines) grow(off int) {
	if l.starts == nil {
		l.starts = make([]int, 1, 64)
	}
	for !l.done && l.starts[len(l.starts)-1] <= off {
		last := l.starts[len(l.starts)-1]
		i := bytes.IndexByte(l.content[last:], '\n')
		if i < 0 {
			l.done = true
			break
		}
		l.starts = append(l.starts, last+i+1)
	}
}

// lineOf returns the 0-based line index holding byte offset off.
func (l *lines) lineOf(off int) int {
	l.grow(off)
	return sort.Search(len(l.starts), func(i int) bool { return l.starts[i] > off }) - 1
}

// pos returns the 1-based line and rune column of byte offset off (clamped to
// the content). Invalid UTF-8 bytes count as one column each.
func (l *lines) pos(off int) (line, col int) {
	if off < 0 {
		off = 0
	}
	if off > len(l.content) {
		off = len(l.content)
	}
	i := l.lineOf(off)
	from, col := l.starts[i], 1
	if l.lastLine == i+1 && l.lastOff >= from && l.lastOff <= off {
		from, col = l.lastOff, l.lastCol
	}
	col += utf8.RuneCount(l.content[from:off])
	l.lastOff, l.lastLine, l.lastCol = off, i+1, col
	return i + 1, col
}

// bounds returns the byte range [start, end) of the 0-based line i, without
// its newline.
func (l *lines) bounds(i int) (int, int) {
	if i < 0 {
		i = 0
	}
	l.grow(0)
	for !l.done && i+1 >= len(l.starts) {
		l.grow(l.starts[len(l.starts)-1])
	}
	if i >= len(l.starts) {
		i = len(l.starts) - 1
	}
	start := l.starts[i]
	end := len(l.content)
	if i+1 < len(l.starts) {
		end = l.starts[i+1] - 1
	}
	return start, end
}

// excerptRunes bounds the context shown either side of a finding.
const excerptRunes = 40

// excerpt returns the text around content[start:end) on its line, with
// invisible runes made visible, at most excerptRunes runes either side.
func (l *lines) excerpt(start, end int) string {
	if start < 0 {
		start = 0
	}
	if end > len(l.content) {
		end = len(l.content)
	}
	if end < start {
		end = start
	}
	ls, le := l.bounds(l.lineOf(start))
	if end > le {
		end = le
	}
	if end < start {
		end = start
	}
	left := l.content[ls:start]
	pre := ""
	if len(left) > excerptRunes*utf8.UTFMax {
		// only the tail can be shown: start at a rune boundary near it
		cut := len(left) - excerptRunes*utf8.UTFMax
		for cut < len(left) && !utf8.RuneStart(left[cut]) {
			cut++
		}
		left = left[cut:]
		pre = "…"
	}
	if n := utf8.RuneCount(left); n > excerptRunes {
		left = skipRunes(left, n-excerptRunes)
		pre = "…"
	}
	right := l.content[end:le]
	post := ""
	if len(right) > excerptRunes {
		if r := takeRunes(right, excerptRunes); len(r) < len(right) {
			right = r
			post = "…"
		}
	}
	mid := l.content[start:end]
	if n := utf8.RuneCount(mid); n > 2*excerptRunes {
		mid = append(append([]byte{}, takeRunes(mid, excerptRunes)...), "…"...)
	}
	return pre + visible(left) + visible(mid) + visible(right) + post
}

func skipRunes(b []byte, n int) []byte {
	for ; n > 0 && len(b) > 0; n-- {
		_, sz := utf8.DecodeRune(b)
		b = b[sz:]
	}
	return b
}

func takeRunes(b []byte, n int) []byte {
	i := 0
	for ; n > 0 && i < len(b); n-- {
		_, sz := utf8.DecodeRune(b[i:])
		i += sz
	}
	return b[:i]
}

// visible renders b as valid UTF-8 in which every rune that does not show
// itself (controls, format characters, bidi controls, tag characters,
// zero-width and other invisible runes) is written as <U+XXXX>, and every
// invalid byte as <0xXX>. Tabs are kept.
func visible(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b))
	for len(b) > 0 {
		c := b[0]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\t') || c == 0x7f {
				fmt.Fprintf(&sb, "<U+%04X>", c)
			} else {
				sb.WriteByte(c)
			}
			b = b[1:]
			continue
		}
		r, sz := utf8.DecodeRune(b)
		if r == utf8.RuneError && sz == 1 {
			fmt.Fprintf(&sb, "<0x%02X>", b[0])
		} else if hiddenRune(r) {
			fmt.Fprintf(&sb, "<U+%04X>", r)
		} else {
			sb.WriteRune(r)
		}
		b = b[sz:]
	}
	return sb.String()
}

// visibleString is visible for strings.
func visibleString(s string) string { return visible([]byte(s)) }

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string(takeRunes([]byte(s), n)) + "…"
}

// maxPerRule bounds the findings one scanner reports per rule and content;
// the rest are counted in one summary finding. It also bounds the work of
// computing positions and excerpts on hostile content.
const maxPerRule = 50

// ruleCap counts findings per rule.
type ruleCap struct {
	n     map[string]int
	first map[string]Finding
}

// take reports whether another finding of rule may be reported.
func (c *ruleCap) take(rule string) bool {
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[rule]++
	return c.n[rule] <= maxPerRule
}

// keep remembers the first finding of a rule, for the summary.
func (c *ruleCap) keep(f Finding) {
	if c.first == nil {
		c.first = map[string]Finding{}
	}
	if _, ok := c.first[f.Rule]; !ok {
		c.first[f.Rule] = f
	}
}

// summaries returns one finding per rule over the cap, with the severity of
// that rule's first finding.
func (c *ruleCap) summaries() []Finding {
	var out []Finding
	for rule, n := range c.n {
		if n <= maxPerRule {
			continue
		}
		out = append(out, summaryFinding(c.first[rule], n-maxPerRule))
	}
	return out
}

// summaryFinding is the finding that stands for n findings over the cap:
// the rule's first finding with the count as its message, no excerpt.
func summaryFinding(first Finding, n int) Finding {
	first.Message = fmt.Sprintf("%d more %s findings not shown", n, first.Rule)
	first.Excerpt = ""
	return first
}

// summaryCount returns the number of findings a summary finding stands
// for, or false when f is not a summary. No scanner's own message starts
// with a number.
func summaryCount(f Finding) (int, bool) {
	if f.Excerpt != "" {
		return 0, false
	}
	rest, ok := strings.CutSuffix(f.Message, " more "+f.Rule+" findings not shown")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n <= 0 || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}
