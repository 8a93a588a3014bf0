package scan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode"
)

// Textual disguises: markup and escapes that a renderer or a model reads
// through but that split or hide an anchor in the raw bytes. normalize
// reads through them (decodeEscape, skipMarkup, collapseSpaced); the
// injection scanner re-reads the lines that hold one (textIndex), beside
// the lines holding a suspicious rune.

// textSpecial marks the ASCII bytes that may start a textual disguise.
var textSpecial = func() (t [256]bool) {
	for _, c := range textChars {
		t[c] = true
	}
	return t
}()

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// htmlNamed are the named character references worth decoding: the ones
// that stand for a letter-shaped, space or invisible rune.
var htmlNamed = map[string]rune{
	"nbsp": 0xa0, "ensp": 0x2002, "emsp": 0x2003, "thinsp": 0x2009, "zwj": 0x200d, "zwnj": 0x200c,
	"shy": 0xad, "lrm": 0x200e, "rlm": 0x200f, "amp": '&', "lt": '<', "gt": '>', "quot": '"',
	"apos": '\'', "sol": '/', "colon": ':', "lpar": '(', "rpar": ')', "period": '.', "comma": ',',
	"excl": '!', "num": '#', "dollar": '$', "percnt": '%', "vert": '|', "tab": '\t', "newline": '\n',
}

// decodeEscape decodes the escape starting at b[i] (one of '&', '%', '\\'):
// an HTML character reference (&#73; &#x49; &nbsp;), a URL escape of a
// printable ASCII byte (%49), or a JSON/JavaScript escape (\u0049,
// \u{49}, \x49). It returns the rune and the escape's length, or n == 0.
func decodeEscape(b []byte, i int) (r rune, n int) {
	rest := b[i:]
	if len(rest) < 3 {
		return 0, 0
	}
	switch rest[0] {
	case '%':
		h, l := hexVal(rest[1]), hexVal(rest[2])
		if h < 0 || l < 0 {
			return 0, 0
		}
		c := rune(h<<4 | l)
		if c < 0x20 || c >= 0x7f {
			return 0, 0
		}
		return c, 3
	case '\\':
		switch rest[1] {
		case 'u', 'U':
			if rest[2] == '{' {
				return hexRun(rest, 3, 1, 6, '}')
			}
			return hexRun(rest, 2, 4, 4, 0)
		case 'x':
			return hexRun(rest, 2, 2, 2, 0)
		}
		return 0, 0
	case '&':
		if rest[1] == '#' {
			if rest[2] == 'x' || rest[2] == 'X' {
				return hexRun(rest, 3, 1, 6, ';')
			}
			v, k := 0, 2
			for k < len(rest) && k < 10 && rest[k] >= '0' && rest[k] <= '9' {
				v = v*10 + int(rest[k]-'0')
				k++
			}
			if k == 2 || k >= len(rest) || rest[k] != ';' || v > unicode.MaxRune {
				return 0, 0
			}
			return rune(v), k + 1
		}
		k := 1
		for k < len(rest) && k < 10 && isASCIILetter(rest[k]) {
			k++
		}
		if k == 1 || k >= len(rest) || rest[k] != ';' {
			return 0, 0
		}
		if r, ok := htmlNamed[string(bytes.ToLower(rest[1:k]))]; ok {
			return r, k + 1
		}
	}
	return 0, 0
}

// hexRun reads between min and max hex digits at rest[k:], then the
// terminator term (0: none), as a rune.
func hexRun(rest []byte, k, min, max int, term byte) (rune, int) {
	v, j := 0, k
	for j < len(rest) && j-k < max {
		d := hexVal(rest[j])
		if d < 0 {
			break
		}
		v = v<<4 | d
		j++
	}
	if j-k < min || v > unicode.MaxRune {
		return 0, 0
	}
	if term != 0 {
		if j >= len(rest) || rest[j] != term {
			return 0, 0
		}
		j++
	}
	return rune(v), j
}

// maxTag bounds the length of an HTML tag normalize strips.
const maxTag = 256

// skipMarkup returns the length of the markup starting at b[i] that a
// renderer hides: an HTML tag (<span …>, </b>, <br/>) or a run of
// markdown emphasis or code characters (* ~ `) touching an ASCII letter.
// 0 when there is none.
func skipMarkup(b []byte, i int) int {
	c := b[i]
	if c == '<' {
		if i+1 >= len(b) || !(isASCIILetter(b[i+1]) || b[i+1] == '/' && i+2 < len(b) && isASCIILetter(b[i+2])) {
			return 0
		}
		for j := i + 1; j < len(b) && j-i <= maxTag; j++ {
			switch b[j] {
			case '>':
				return j + 1 - i
			case '<', '\n':
				return 0
			}
		}
		return 0
	}
	if c == '_' {
		// Underscore emphasis opens or closes a word (_Ignore_, __all__);
		// inside a word (snake_case) it is part of it.
		j := i
		for j < len(b) && b[j] == '_' {
			j++
		}
		before := i > 0 && isWordByte(b[i-1])
		after := j < len(b) && isWordByte(b[j])
		if before != after && (i > 0 && isASCIILetter(b[i-1]) || j < len(b) && isASCIILetter(b[j])) {
			return j - i
		}
		return 0
	}
	if c != '*' && c != '~' && c != '`' {
		return 0
	}
	j := i
	for j < len(b) && (b[j] == '*' || b[j] == '~' || b[j] == '`') {
		j++
	}
	if !(i > 0 && isASCIILetter(b[i-1]) || j < len(b) && isASCIILetter(b[j])) {
		return 0
	}
	return j - i
}

// spacedSep are the separators of letter-spaced words ("i g n o r e",
// "i.g.n.o.r.e", "i-g-n-o-r-e").
func spacedSep(c byte) bool { return c == ' ' || c == '.' || c == '-' || c == '_' }

// minSpaced is the fewest single letters a letter-spaced run must have to
// be collapsed.
const minSpaced = 3

// collapseSpaced removes, in normalised text, the separators of runs of at
// least minSpaced single letters each separated from the next by one and
// the same separator byte; offs is edited alongside. A wider gap (two
// spaces) ends a run and stays a word break.
func collapseSpaced(out []byte, offs []int) ([]byte, []int) {
	if !hasSpaced(out) {
		return out, offs
	}
	w := 0
	for i := 0; i < len(out); {
		if n := spacedRun(out, i); n > 0 {
			for k := i; k < i+n; k += 2 {
				out[w], offs[w] = out[k], offs[k]
				w++
			}
			i += n
			continue
		}
		out[w], offs[w] = out[i], offs[i]
		w++
		i++
	}
	return out[:w], offs[:w]
}

// spacedRun returns the byte length of the letter-spaced run starting at
// b[i] (letter, sep, letter, … letter), or 0.
func spacedRun(b []byte, i int) int {
	if !isASCIILetter(b[i]) || i > 0 && (isASCIILetter(b[i-1]) || b[i-1] >= 0x80) {
		return 0
	}
	if i+1 >= len(b) || !spacedSep(b[i+1]) {
		return 0
	}
	sep := b[i+1]
	n := 1
	j := i
	for j+2 < len(b) && b[j+1] == sep && isASCIILetter(b[j+2]) && (j+3 >= len(b) || !isASCIILetter(b[j+3]) && b[j+3] < 0x80) {
		j += 2
		n++
	}
	if n < minSpaced {
		return 0
	}
	return j + 1 - i
}

// hasSpaced reports whether b may hold a letter-spaced run.
func hasSpaced(b []byte) bool { return nextSpaced(b, 0) >= 0 }

// spacedCandidate reports whether a letter-spaced run may pass through
// b[k]: b[k] and b[k+2] are the same separator, with letters at k-1, k+1
// and k+3 (what the shortest run, three letters, has).
func spacedCandidate(b []byte, k int) bool {
	c := b[k]
	return k > 0 && k+3 < len(b) && b[k+2] == c && spacedSep(c) &&
		isASCIILetter(b[k+1]) && isASCIILetter(b[k-1]) && isASCIILetter(b[k+3])
}

// textIndex finds the lines of one content that hold a textual disguise
// (see textSpecial and letter-spaced words), in order. It is read forward
// only (the injection scanner's normalised pass).
type textIndex struct {
	b    []byte
	next int // next disguise at or after the last from; -1 none left, -2 not searched
	sp   int // next letter-spaced run start; -1 none, -2 not searched
	lh   int // next leet digit or line-end hyphen; -1 none, -2 not searched
}

const textChars = "&%\\*<`~_@$|!"

func newTextIndex(b []byte) *textIndex { return &textIndex{b: b, next: -2, sp: -2, lh: -2} }

// nextTextSpecial returns the offset of the first disguise starting with a
// textChars byte at or after from, or -1. One table lookup per byte (the
// bytes are frequent in markdown: a search per byte value would restart
// at every emphasis mark).
func nextTextSpecial(b []byte, from int) int {
	if from >= len(b) {
		return -1
	}
	for i, c := range b[from:] {
		if !textSpecial[c] {
			continue
		}
		k := from + i
		switch c {
		case '@', '$', '|', '!':
			// leetspeak: only between two letters
			if k == 0 || k+1 >= len(b) || !isASCIILetter(b[k-1]) || !isASCIILetter(b[k+1]) {
				continue
			}
		}
		if textDisguise(b, k) {
			return k
		}
	}
	return -1
}

// textDisguise reports whether the byte at b[i] (one of textChars) starts
// a disguise normalize reads through.
func textDisguise(b []byte, i int) bool {
	switch b[i] {
	case '0', '1', '3', '4', '5', '7', '@', '$', '|', '!':
		return leetDisguise(b, i) && (b[i] > '9' || leetOf[b[i]] != 0)
	case '-':
		// A word hyphenated across a line break.
		n, _ := skipStructure(b, i)
		return n > 0
	case '&', '%', '\\':
		_, n := decodeEscape(b, i)
		return n > 0
	case '<':
		// Tags inside a word (Ig<b></b>nore), or between two words each
		// wrapped in tags (</span> <span>): elsewhere the raw text reads
		// the same words in the same order.
		if i == 0 || skipMarkup(b, i) == 0 {
			return false
		}
		j, spaced := i, false
		for j < len(b) {
			n := skipMarkup(b, j)
			if n == 0 || b[j] != '<' {
				break
			}
			j += n
			k := j
			for k < len(b) && (b[k] == ' ' || b[k] == '\t') {
				k++
			}
			if k > j && k < len(b) && b[k] == '<' && skipMarkup(b, k) > 0 {
				spaced, j = true, k
			}
		}
		return j < len(b) && (isASCIILetter(b[i-1]) && isASCIILetter(b[j]) || spaced && (isASCIILetter(b[i-1]) || isASCIILetter(b[j])))
	case '_':
		return skipMarkup(b, i) > 0
	default:
		// Emphasis inside a word (Ig**nore**), or closing one word and
		// opening the next (**Ignore** **all**).
		j := i
		for j < len(b) && (b[j] == '*' || b[j] == '~' || b[j] == '`') {
			j++
		}
		if i == 0 || j >= len(b) || !isASCIILetter(b[i-1]) {
			return false
		}
		if isASCIILetter(b[j]) {
			return true
		}
		k := j
		for k < len(b) && (b[k] == ' ' || b[k] == '\t') {
			k++
		}
		if k == j || k >= len(b) || !(b[k] == '*' || b[k] == '~' || b[k] == '`') {
			return false
		}
		for k < len(b) && (b[k] == '*' || b[k] == '~' || b[k] == '`') {
			k++
		}
		return k < len(b) && isASCIILetter(b[k])
	}
}

// at returns the offset of the first disguise at or after from, or -1.
func (x *textIndex) at(from int) int {
	if x.next != -1 && x.next < from {
		x.next = nextTextSpecial(x.b, from)
	}
	if x.sp != -1 && x.sp < from {
		x.sp = nextSpaced(x.b, from)
	}
	if x.lh != -1 && x.lh < from {
		x.lh = nextLeetOrHyphen(x.b, from)
	}
	return firstOf(firstOf(x.next, x.sp), x.lh)
}

// firstOf returns the smaller of two offsets, -1 standing for none.
func firstOf(a, b int) int {
	if a < 0 || b >= 0 && b < a {
		return b
	}
	return a
}

// nextLeetOrHyphen returns the offset of the first leetspeak digit (0, 1,
// 3, 4, 5 or 7 between two ASCII letters) or hyphen ending a line inside a
// word at or after from, or -1. Digits are looked for eight bytes at a
// time: prose has few.
func nextLeetOrHyphen(b []byte, from int) int {
	const (
		lo7 = 0x7f7f7f7f7f7f7f7f
		hi  = 0x8080808080808080
	)
	check := func(k int) int {
		switch c := b[k]; {
		case c == '\n':
			if k-1 >= from && b[k-1] == '-' {
				if n, _ := skipStructure(b, k-1); n > 0 {
					return k - 1
				}
			}
		case leetOf[c] != 0 && k > 0 && k+1 < len(b) && isASCIILetter(b[k-1]) && isASCIILetter(b[k+1]):
			return k
		}
		return -1
	}
	i := from
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		w7 := w & lo7
		ascii := ^w & hi
		dig := (w7 + 0x5050505050505050) &^ (w7 + 0x4646464646464646) & ascii // '0' <= byte <= '9'
		if dig != 0 {
			x := w7 | 0x2020202020202020
			letter := (x + 0x1f1f1f1f1f1f1f1f) &^ (x + 0x0505050505050505) & ascii // 'a' <= byte|0x20 <= 'z'
			// a letter on both sides (the first and last byte: checked
			// one by one)
			dig &= (letter<<8 | 0x80) & (letter>>8 | 0x8000000000000000)
		}
		hy := ^((w7 ^ 0x2d2d2d2d2d2d2d2d) + lo7 | w7 ^ 0x2d2d2d2d2d2d2d2d) & ascii // byte == '-'
		nl := ^((w7 ^ 0x0a0a0a0a0a0a0a0a) + lo7 | w7 ^ 0x0a0a0a0a0a0a0a0a) & ascii // byte == '\n'
		m := dig | nl&(hy<<8|0x80)
		for ; m != 0; m &= m - 1 {
			if r := check(i + bits.TrailingZeros64(m)/8); r >= 0 {
				return r
			}
		}
	}
	for ; i < len(b); i++ {
		if r := check(i); r >= 0 {
			return r
		}
	}
	return -1
}

// nextSpaced returns the offset of the first letter-spaced run at or after
// from, or -1. It reads eight bytes at a time for a separator byte equal
// to the byte two further on, then checks such a candidate in full.
func nextSpaced(b []byte, from int) int {
	const (
		lo = 0x0101010101010101
		hi = 0x8080808080808080
	)
	// zero has the high bit of each zero byte of x set (and, after a zero
	// byte, maybe more: a filter only).
	zero := func(x uint64) uint64 { return (x - lo) &^ x & hi }
	// exactZero has the high bit of exactly the zero bytes of x set.
	exactZero := func(x uint64) uint64 { return ^((x&^hi + ^uint64(hi)) | x | ^uint64(hi)) }
	try := func(k int) int {
		if !spacedCandidate(b, k) {
			return -1
		}
		for t := max(from, k-2*minSpaced); t <= k+1; t++ {
			if spacedRun(b, t) > 0 {
				return t
			}
		}
		return -1
	}
	i := from
	for ; i+8 <= len(b); i += 6 {
		w := binary.LittleEndian.Uint64(b[i:])
		eq := zero(w^w>>16) & 0x0000808080808080 // b[k] == b[k+2], k = i..i+5
		if eq == 0 {
			continue
		}
		m := eq & (zero(w^0x2020202020202020) | zero(w^0x2e2e2e2e2e2e2e2e) | zero(w^0x2d2d2d2d2d2d2d2d) | zero(w^0x5f5f5f5f5f5f5f5f))
		m &^= exactZero(w ^ w>>8) // b[k] == b[k+1] (indentation): b[k+1] is no letter
		for ; m != 0; m &= m - 1 {
			if t := try(i + bits.TrailingZeros64(m)/8); t >= 0 {
				return t
			}
		}
	}
	for k := max(from, i); k+3 < len(b); k++ {
		if t := try(k); t >= 0 {
			return t
		}
	}
	return -1
}

// combiningMark reports whether r is a nonspacing combining mark (dropped
// by normalize: "I\u0307gnore" reads "ignore").
func combiningMark(r rune) bool { return r >= 0x300 && unicode.Is(unicode.Mn, r) }

// unusualSpace reports whether r is a space other than ASCII's: no-break,
// en/em, thin, ideographic … (normalize reads each as a space).
func unusualSpace(r rune) bool {
	return r >= 0x80 && r != 0x85 && r != 0x2028 && r != 0x2029 && unicode.IsSpace(r)
}
