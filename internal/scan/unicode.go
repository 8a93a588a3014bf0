package scan

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Rule ids of the unicode scanner.
const (
	RuleBidi       = "unicode/bidi-control"
	RuleTag        = "unicode/tag-characters"
	RuleZeroWidth  = "unicode/zero-width"
	RuleControl    = "unicode/control-character"
	RuleConfusable = "unicode/mixed-script-confusable"
	RuleNFKC       = "unicode/nfkc-compatibility"
	// RuleUnusualSpace: a non-ASCII space (no-break, thin, ideographic …)
	// joining two ASCII words, which keeps a phrase apart from its
	// plain-text spelling.
	RuleUnusualSpace = "unicode/unusual-space"
)

// runeClass sorts the runes the unicode scanner and the normaliser care about.
type runeClass uint8

const (
	rcNormal    runeClass = iota
	rcBidi                // Trojan Source: embeddings, overrides, isolates
	rcTag                 // U+E0000–U+E007F
	rcInvisible           // zero-width, joiners, fillers, marks that render as nothing
	rcControl             // C0/C1 controls other than tab, newline, carriage return
)

func classify(r rune) runeClass {
	switch {
	case r < 0x20:
		if r == '\t' || r == '\n' || r == '\r' {
			return rcNormal
		}
		return rcControl
	case r < 0x7f:
		return rcNormal
	case r <= 0x9f:
		return rcControl
	case r < 0xad:
		return rcNormal
	}
	switch {
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return rcBidi
	case r >= 0xe0000 && r <= 0xe007f:
		return rcTag
	case r == 0xad, r == 0x34f, r == 0x61c, r == 0x115f, r == 0x1160, r == 0x17b4, r == 0x17b5,
		r == 0x180e, r >= 0x200b && r <= 0x200f, r >= 0x2060 && r <= 0x2064, r == 0x206a,
		r >= 0x206b && r <= 0x206f, r == 0x3164, r >= 0xfe00 && r <= 0xfe0f, r == 0xfeff,
		r == 0xffa0, r >= 0xfff9 && r <= 0xfffb, r >= 0x1bca0 && r <= 0x1bca3,
		r >= 0x1d173 && r <= 0x1d17a, r >= 0xe0100 && r <= 0xe01ef:
		return rcInvisible
	}
	return rcNormal
}

// hiddenRune reports whether r does not show itself when rendered.
func hiddenRune(r rune) bool {
	if classify(r) != rcNormal {
		return true
	}
	return r == 0x2028 || r == 0x2029 || r == utf8.RuneError
}

// homoglyphs maps Cyrillic, Greek and Armenian letters that look like Latin
// letters to those letters (lower case). It is the mapping used both to
// report mixed-script words and to normalise text before the injection scan.
var homoglyphs = map[rune]byte{
	// Cyrillic
	'а': 'a', 'А': 'a', 'в': 'b', 'В': 'b', 'с': 'c', 'С': 'c', 'ԁ': 'd', 'е': 'e', 'Е': 'e', 'ё': 'e',
	'һ': 'h', 'Н': 'h', 'і': 'i', 'І': 'i', 'ї': 'i', 'ј': 'j', 'Ј': 'j', 'к': 'k', 'К': 'k', 'ӏ': 'l',
	'М': 'm', 'о': 'o', 'О': 'o', 'р': 'p', 'Р': 'p', 'ԛ': 'q', 'ѕ': 's', 'Ѕ': 's', 'т': 't', 'Т': 't',
	'ս': 'u', 'ѵ': 'v', 'ԝ': 'w', 'Ԝ': 'w', 'х': 'x', 'Х': 'x', 'у': 'y', 'У': 'y', 'ү': 'y',
	// Greek
	'α': 'a', 'Α': 'a', 'Β': 'b', 'ε': 'e', 'Ε': 'e', 'Η': 'h', 'ι': 'i', 'Ι': 'i', 'κ': 'k', 'Κ': 'k',
	'Μ': 'm', 'Ν': 'n', 'ο': 'o', 'Ο': 'o', 'ρ': 'p', 'Ρ': 'p', 'τ': 't', 'Τ': 't', 'υ': 'u', 'ν': 'v',
	'χ': 'x', 'Χ': 'x', 'γ': 'y', 'Υ': 'y', 'Ζ': 'z',
	// Armenian
	'օ': 'o', 'ց': 'g', 'հ': 'h', 'ո': 'n',
}

// asciiTable marks bytes the fast path must look at: controls other than
// tab/newline/CR, DEL, and every non-ASCII byte.
var asciiTable = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c >= 0x7f
	}
	return t
}()

// firstSpecial returns the offset of the first byte asciiTable marks, or -1.
// It reads eight bytes at a time and computes the marked bytes of a word
// exactly (no carries cross bytes: each byte is tested on its low seven
// bits after masking).
func firstSpecial(b []byte) int {
	const (
		lo7  = 0x7f7f7f7f7f7f7f7f
		hi   = 0x8080808080808080
		ones = 0x0101010101010101
	)
	// zero returns the high bit of every zero byte of x (x < 0x80 per byte).
	zero := func(x uint64) uint64 { return ^((x + lo7) | x) & hi }
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		w7 := w & lo7
		ctl := ^(w7 + 0x6060606060606060) & hi // low seven bits < 0x20
		if w&hi|ctl|(w7+ones)&hi == 0 {
			continue // printable ASCII only (w7+1 carries into bit 7 only for 0x7f)
		}
		ok := zero(w7^(ones*'\t')) | zero(w7^(ones*'\n')) | zero(w7^(ones*'\r'))
		mark := w&hi | zero(w7^lo7) | ctl&^ok
		if mark != 0 {
			return i + bits.TrailingZeros64(mark)/8
		}
	}
	for ; i < len(b); i++ {
		if asciiTable[b[i]] {
			return i
		}
	}
	return -1
}

type unicodeScanner struct{}

// NewUnicodeScanner returns the scanner for bidi controls, tag characters,
// zero-width and invisible runes, control characters, mixed-script
// confusable words and NFKC compatibility words.
func NewUnicodeScanner() Scanner { return unicodeScanner{} }

func (unicodeScanner) Name() string { return "unicode" }

func (sc unicodeScanner) Scan(ctx context.Context, content []byte, m Meta) ([]Finding, error) {
	return sc.scanSpecials(ctx, content, m, newSpecialIndex(content))
}

// scanSpecials is Scan given the index of content's marked bytes.
func (unicodeScanner) scanSpecials(ctx context.Context, content []byte, m Meta, sp *specialIndex) ([]Finding, error) {
	first := sp.next(0)
	if first < 0 {
		return nil, nil
	}
	ln := newLines(content)
	var out []Finding
	var caps ruleCap
	add := func(rule string, sev Severity, start, end int, msg string) {
		if !caps.take(rule) {
			return
		}
		line, col := ln.pos(start)
		f := Finding{Scanner: "unicode", Rule: rule, Severity: sev, Path: m.Path,
			Line: line, Column: col, Message: msg, Excerpt: ln.excerpt(start, end)}
		caps.keep(f)
		out = append(out, f)
	}
	// Runs of hidden runes of one class are reported once.
	i := first
	for i < len(content) {
		if i&0xffff == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !asciiTable[content[i]] {
			n := sp.next(i)
			if n < 0 {
				break
			}
			i = n
		}
		r, sz := utf8.DecodeRune(content[i:])
		if r == utf8.RuneError && sz == 1 {
			// Invalid UTF-8: callers skip binary files; stray bytes are
			// rendered visibly in excerpts and otherwise ignored.
			i++
			continue
		}
		cls := classify(r)
		if cls == rcNormal {
			if unusualSpace(r) && i > 0 && isASCIILetter(content[i-1]) && i+sz < len(content) && isASCIILetter(content[i+sz]) {
				add(RuleUnusualSpace, Warning, i, i+sz, fmt.Sprintf("unusual space %s between words", runeList([]rune{r})))
			}
			i += sz
			continue
		}
		// Extend the run of the same class.
		j := i + sz
		var runes []rune
		runes = append(runes, r)
		for j < len(content) {
			r2, sz2 := utf8.DecodeRune(content[j:])
			if classify(r2) != cls || r2 == '\n' {
				break
			}
			runes = append(runes, r2)
			j += sz2
		}
		switch cls {
		case rcBidi:
			add(RuleBidi, Critical, i, j, fmt.Sprintf("bidirectional control %s can reorder how the text displays (Trojan Source)", runeList(runes)))
		case rcTag:
			if !flagTagSequence(content, i, runes) {
				hidden := decodeTags(runes)
				msg := "Unicode tag characters hide text"
				if hidden != "" {
					msg = fmt.Sprintf("Unicode tag characters hide text: %q", clip(hidden, 200))
				}
				add(RuleTag, Critical, i, j, msg)
			}
		case rcInvisible:
			if !benignInvisible(content, i, j, runes) {
				add(RuleZeroWidth, Warning, i, j, fmt.Sprintf("invisible character %s", runeList(runes)))
			}
		case rcControl:
			add(RuleControl, Warning, i, j, fmt.Sprintf("control character %s", runeList(runes)))
		}
		i = j
	}
	out = append(out, wordFindings(content, first, ln, m, &caps, sp)...)
	out = append(out, caps.summaries()...)
	sortFindings(out)
	return out, nil
}

// runeList names up to four distinct runes as U+XXXX (NAME-less, stable).
func runeList(rs []rune) string {
	seen := map[rune]bool{}
	var parts []string
	for _, r := range rs {
		if !seen[r] && len(parts) < 4 {
			seen[r] = true
			parts = append(parts, fmt.Sprintf("U+%04X", r))
		}
	}
	s := strings.Join(parts, ", ")
	if len(rs) > 1 {
		s += fmt.Sprintf(" (%d in a row)", len(rs))
	}
	return s
}

// decodeTags reveals the ASCII hidden in tag characters U+E0020–U+E007E.
func decodeTags(rs []rune) string {
	var sb strings.Builder
	for _, r := range rs {
		if r >= 0xe0020 && r <= 0xe007e {
			sb.WriteByte(byte(r - 0xe0000))
		}
	}
	return sb.String()
}

// flagTagSequence reports whether the tag run at content[i:] is an emoji
// subdivision flag: U+1F3F4 followed by lower-case letters/digits and
// U+E007F CANCEL TAG (e.g. the flag of Scotland).
func flagTagSequence(content []byte, i int, rs []rune) bool {
	prev, _ := utf8.DecodeLastRune(content[:i])
	if prev != 0x1f3f4 || len(rs) < 2 || len(rs) > 8 || rs[len(rs)-1] != 0xe007f {
		return false
	}
	for _, r := range rs[:len(rs)-1] {
		c := r - 0xe0000
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// benignInvisible lets through the invisible runes that ordinary text uses:
// a byte-order mark at the very start, emoji joiners and variation selectors
// next to non-letters, and ZWJ/ZWNJ inside words of scripts that need them.
// Anything touching an ASCII letter or digit is never benign: that is how
// keywords are split to dodge filters.
func benignInvisible(content []byte, i, j int, rs []rune) bool {
	if i == 0 && len(rs) == 1 && rs[0] == 0xfeff {
		return true
	}
	prev, _ := utf8.DecodeLastRune(content[:i])
	next, _ := utf8.DecodeRune(content[j:])
	if isASCIIAlnum(prev) || isASCIIAlnum(next) {
		return false
	}
	for _, r := range rs {
		switch {
		case r == 0x200d, r == 0x200c, r >= 0xfe00 && r <= 0xfe0f:
		default:
			return false
		}
	}
	return prev >= 0x80 // follows an emoji or a non-Latin letter
}

func isASCIIAlnum(r rune) bool {
	return r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
}

// wordFindings reports mixed-script confusable words and words written with
// compatibility characters (fullwidth, mathematical, circled letters) whose
// NFKC form is plain ASCII. Only words containing a non-ASCII rune are
// looked at.
func wordFindings(content []byte, from int, ln *lines, m Meta, caps *ruleCap, sp *specialIndex) []Finding {
	var out []Finding
	i := from
	// Back up to the start of the word holding the first special byte.
	for i > 0 {
		r, sz := utf8.DecodeLastRune(content[:i])
		if !wordRune(r) {
			break
		}
		i -= sz
	}
	for i < len(content) {
		r, sz := utf8.DecodeRune(content[i:])
		if !wordRune(r) {
			i += sz
			// Skip quickly over ASCII text without any special byte.
			if r < 0x80 {
				n := sp.next(i)
				if n < 0 {
					return out
				}
				k := n - i
				if k > 0 {
					// Back up to the start of the word holding it.
					j := i + k
					for j > i {
						r2, sz2 := utf8.DecodeLastRune(content[:j])
						if !wordRune(r2) {
							break
						}
						j -= sz2
					}
					i = j
				}
			}
			continue
		}
		start := i
		var latin, conf, compat, other bool
		for i < len(content) {
			r, sz = utf8.DecodeRune(content[i:])
			if !wordRune(r) {
				break
			}
			switch {
			case r < 0x80:
				if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
					latin = true
				}
			case classify(r) != rcNormal:
				// zero-width inside a word: reported by the rune pass; the
				// word is judged without it.
			default:
				if _, ok := homoglyphs[r]; ok {
					conf = true
				} else if compatASCII(r) != "" {
					compat = true
				} else if unicode.Is(unicode.Latin, r) {
					latin = true
				} else if unicode.IsLetter(r) {
					other = true
				}
			}
			i += sz
		}
		word := content[start:i]
		rule := ""
		switch {
		case conf && latin, conf && !other && compat:
			rule = RuleConfusable
		case compat && !other:
			rule = RuleNFKC
		}
		if rule == "" || !caps.take(rule) {
			continue
		}
		line, col := ln.pos(start)
		switch {
		case conf && latin:
			out = append(out, Finding{Scanner: "unicode", Rule: RuleConfusable, Severity: Critical, Path: m.Path,
				Line: line, Column: col, Excerpt: ln.excerpt(start, i),
				Message: fmt.Sprintf("word %q mixes Latin with look-alike Cyrillic/Greek letters; it reads as %q", visible(word), skeleton(word))})
		case conf && !other && compat:
			out = append(out, Finding{Scanner: "unicode", Rule: RuleConfusable, Severity: Critical, Path: m.Path,
				Line: line, Column: col, Excerpt: ln.excerpt(start, i),
				Message: fmt.Sprintf("word %q mixes look-alike letters from several scripts; it reads as %q", visible(word), skeleton(word))})
		case compat && !other:
			out = append(out, Finding{Scanner: "unicode", Rule: RuleNFKC, Severity: Warning, Path: m.Path,
				Line: line, Column: col, Excerpt: ln.excerpt(start, i),
				Message: fmt.Sprintf("word %q uses compatibility characters; NFKC normalises it to %q", visible(word), skeleton(word))})
		}
		caps.keep(out[len(out)-1])
	}
	return out
}

// wordRune reports whether r continues a word (letters, digits, marks,
// underscore and the invisible runes used to split words).
func wordRune(r rune) bool {
	if r < 0x80 {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_'
	}
	if r == utf8.RuneError {
		return false
	}
	if c := classify(r); c == rcInvisible || c == rcTag {
		return r != 0xfeff
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || compatASCII(r) != ""
}

// compatASCII returns the ASCII letters or digits NFKC maps r to, or "".
func compatASCII(r rune) string {
	if r < 0x80 {
		return ""
	}
	if r >= 0xff01 && r <= 0xff5e { // fullwidth ASCII
		c := byte(r - 0xfee0)
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return string(c)
		}
		return ""
	}
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	if norm.NFKC.IsNormal(buf[:n]) {
		return ""
	}
	s := norm.NFKC.String(string(buf[:n]))
	if s == "" {
		return ""
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return ""
		}
	}
	return s
}

// skeleton is the lower-case ASCII reading of a word: invisible runes
// dropped, homoglyphs and compatibility letters mapped.
func skeleton(word []byte) string {
	n, _ := normalize(word, 0)
	return string(n)
}

// normalize produces the text the injection scanner reads: ASCII lower-cased;
// tag characters U+E0020–U+E007E decoded to the ASCII they hide; bidi,
// zero-width, invisible and control runes dropped; homoglyphs and
// compatibility letters (fullwidth, mathematical, circled …) mapped to
// ASCII; other whitespace to a space; combining marks dropped; HTML tags
// and in-word markdown emphasis skipped; HTML character references, URL
// escapes and \u escapes decoded; letter-spaced words collapsed
// (normtext.go). offs[k] is base plus the offset in b of the rune (or
// escape) that produced output byte k.
func normalize(b []byte, base int) (out []byte, offs []int) {
	out = make([]byte, 0, len(b))
	offs = make([]int, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf && structSpecial[c] {
			if n, as := skipStructure(b, i); n > 0 {
				if as != 0 {
					out = append(out, as)
					offs = append(offs, base+i)
				}
				i += n
				continue
			}
		}
		if c < utf8.RuneSelf && textSpecial[c] {
			if n := htmlCommentLen(b, i); n > 0 {
				out = append(out, ' ')
				offs = append(offs, base+i)
				i += n
				continue
			}
			if n := skipMarkup(b, i); n > 0 {
				if c == '<' && blockTag(b, i, n) {
					out = append(out, ' ')
					offs = append(offs, base+i)
				}
				i += n
				continue
			}
			if r, n := decodeEscape(b, i); n > 0 {
				out, offs = appendNormRune(out, offs, r, base+i)
				i += n
				continue
			}
		}
		if c < utf8.RuneSelf {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if classify(rune(c)) == rcNormal {
				out = append(out, c)
				offs = append(offs, base+i)
			}
			i++
			continue
		}
		r, sz := utf8.DecodeRune(b[i:])
		if !(r == utf8.RuneError && sz == 1) {
			out, offs = appendNormRune(out, offs, r, base+i)
		}
		i += sz
	}
	return collapseSpaced(out, offs)
}

// appendNormRune appends normalize's reading of the rune r found at
// content offset at.
func appendNormRune(out []byte, offs []int, r rune, at int) ([]byte, []int) {
	if r < utf8.RuneSelf {
		c := byte(r)
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if classify(r) == rcNormal {
			out = append(out, c)
			offs = append(offs, at)
		}
		return out, offs
	}
	switch cls := classify(r); {
	case r == utf8.RuneError:
	case cls == rcTag:
		if r >= 0xe0020 && r <= 0xe007e {
			c := byte(r - 0xe0000)
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			out = append(out, c)
			offs = append(offs, at)
		}
	case cls != rcNormal:
	case combiningMark(r):
	default:
		if h, ok := homoglyphs[r]; ok {
			out = append(out, h)
			offs = append(offs, at)
		} else if s := compatASCII(r); s != "" {
			for k := 0; k < len(s); k++ {
				c := s[k]
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				out = append(out, c)
				offs = append(offs, at)
			}
		} else if unicode.IsSpace(r) {
			out = append(out, ' ')
			offs = append(offs, at)
		} else {
			lr := unicode.ToLower(r)
			n := len(out)
			out = utf8.AppendRune(out, lr)
			for k := n; k < len(out); k++ {
				offs = append(offs, at)
			}
		}
	}
	return out, offs
}

var (
	suspiciousOnce sync.Once
	suspiciousBMP  []uint64 // bit r set: rune r normalises to something else
)

// suspicious reports whether normalize changes r other than by lower-casing
// ASCII: hidden runes, look-alikes and compatibility letters. Ordinary
// non-ASCII text (dashes, arrows, accented or non-Latin words) is not.
func suspicious(r rune) bool {
	if r < 0x80 {
		return classify(r) != rcNormal
	}
	if r < 0x10000 {
		suspiciousOnce.Do(func() {
			suspiciousBMP = make([]uint64, 0x10000/64)
			for c := rune(0x80); c < 0x10000; c++ {
				if suspiciousSlow(c) {
					suspiciousBMP[c>>6] |= 1 << (c & 63)
				}
			}
		})
		return suspiciousBMP[r>>6]&(1<<(r&63)) != 0
	}
	return suspiciousSlow(r)
}

func suspiciousSlow(r rune) bool {
	if classify(r) != rcNormal {
		return true
	}
	if _, ok := homoglyphs[r]; ok {
		return true
	}
	return compatASCII(r) != "" || combiningMark(r) || unusualSpace(r)
}

// nextSuspicious returns the offset of the first suspicious rune at or
// after from in the content sp indexes (an ASCII control counts), or -1.
func nextSuspicious(sp *specialIndex, from int) int {
	b := sp.b
	for off := from; off < len(b); {
		n := sp.next(off)
		if n < 0 {
			return -1
		}
		r, sz := utf8.DecodeRune(b[n:])
		if suspicious(r) && !(r == utf8.RuneError && sz == 1) {
			return n
		}
		off = n + sz
	}
	return -1
}

// specialIndex finds the bytes asciiTable marks in one content once: it
// lists their offsets (when there are not too many) so that the unicode
// scanner's two passes and the injection scanner's search for disguised
// runes share one read of the content.
type specialIndex struct {
	b    []byte
	offs []int32 // nil: too many listed, search instead
	k    int     // cursor into offs
}

// maxSpecialList bounds the offsets kept (256 KiB); content with more
// marked bytes (e.g. non-Latin text) is searched instead.
const maxSpecialList = 1 << 16

func newSpecialIndex(b []byte) *specialIndex { return indexSpecials(b, []int32{}) }

// indexSpecials is newSpecialIndex appending the offsets to offs[:0] (a
// reader of consecutive chunks reuses one array).
func indexSpecials(b []byte, offs []int32) *specialIndex {
	if offs == nil {
		offs = []int32{} // nil means "search"
	}
	x := &specialIndex{b: b, offs: offs[:0]}
	for off := 0; off < len(b); {
		k := firstSpecial(b[off:])
		if k < 0 {
			break
		}
		off += k
		if len(x.offs) == maxSpecialList || off > math.MaxInt32 {
			x.offs = nil
			break
		}
		x.offs = append(x.offs, int32(off))
		off++
	}
	return x
}

// cursor returns an independent reader of the index.
func (x *specialIndex) cursor() *specialIndex {
	c := *x
	c.k = 0
	return &c
}

// next returns the offset of the first marked byte at or after i, or -1.
func (x *specialIndex) next(i int) int {
	if x.offs == nil {
		if i >= len(x.b) {
			return -1
		}
		if k := firstSpecial(x.b[i:]); k >= 0 {
			return i + k
		}
		return -1
	}
	if x.k > 0 && int(x.offs[x.k-1]) >= i { // moved back: search again
		x.k = sort.Search(len(x.offs), func(j int) bool { return int(x.offs[j]) >= i })
	}
	for x.k < len(x.offs) && int(x.offs[x.k]) < i {
		x.k++
	}
	if x.k == len(x.offs) {
		return -1
	}
	return int(x.offs[x.k])
}

// firstSuspicious returns the offset of the first suspicious rune in b (an
// ASCII control counts), or -1.
func firstSuspicious(b []byte) int {
	for off := 0; off < len(b); {
		k := firstSpecial(b[off:])
		if k < 0 {
			return -1
		}
		off += k
		r, sz := utf8.DecodeRune(b[off:])
		if suspicious(r) && !(r == utf8.RuneError && sz == 1) {
			return off
		}
		off += sz
	}
	return -1
}
