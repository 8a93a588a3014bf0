package scan

import (
	"sync"
	"unicode/utf8"
)

// RuleEncoded is injection text hidden in an encoding other than base64:
// hex, base32, ROT13 or written backwards. Decoded runs are read only when
// they look like text.
const RuleEncoded = "injection/encoded-payload"

// encodedWords are words of injection phrases as ROT13 and reversed text
// spell them: where one occurs, its line is decoded and read again.
var encodedWords = []string{"ignore", "disregard", "forget", "instructions", "previous", "prompt", "system"}

// encodedDecoders maps each ROT13 or reversed spelling of an encoded
// word (anchors of the RuleEncoded entry of moreInjRules) to its decoder
// and the encoding's name.
var encodedDecoders = sync.OnceValue(func() map[string]encodedDecoder {
	m := map[string]encodedDecoder{}
	for _, w := range encodedWords {
		m[string(rot13([]byte(w)))] = encodedDecoder{rot13, "ROT13 text"}
		m[string(reverseRunes([]byte(w)))] = encodedDecoder{reverseRunes, "reversed text"}
	}
	return m
})

type encodedDecoder struct {
	decode func([]byte) []byte
	name   string
}

// encodedAnchors are the anchors of the RuleEncoded entry.
func encodedAnchors() []string {
	var out []string
	for _, w := range encodedWords {
		out = append(out, string(rot13([]byte(w))), string(reverseRunes([]byte(w))))
	}
	return out
}

// noMatch is the find of the RuleEncoded anchors: they only mark lines
// for encodedPass.
func noMatch([]byte, int, int) (int, int, bool) { return 0, 0, false }

func rot13(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			c = 'a' + (c-'a'+13)%26
		case c >= 'A' && c <= 'Z':
			c = 'A' + (c-'A'+13)%26
		}
		out[i] = c
	}
	return out
}

// reverseRunes returns b written backwards, rune by rune.
func reverseRunes(b []byte) []byte {
	rs := []rune(string(b))
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
	return []byte(string(rs))
}

// encodedPass: lines holding a ROT13 or reversed injection word (found
// among the anchors), decoded and read again. One finding per line.
func (c *injCollector) encodedPass(anchors []kwHit) {
	injAnchors, injAnchorPats := injAnchorTable()
	decs := encodedDecoders()
	done := -1 // end of the last line decoded
	for _, h := range anchors {
		at, k := int(h.off), int(h.kw)
		if at < done || *c.budget < 0 || injRules[injAnchorPats[k][0][0]].id != RuleEncoded {
			continue
		}
		d, ok := decs[injAnchors.kws[k]]
		if !ok {
			continue
		}
		ls, le := lineBounds(c.content, at)
		le = min(le, ls+4*injSpan)
		done = le
		*c.budget -= le - ls
		c.matchDecoded(d.decode(c.content[ls:le]), ls, le, d.name)
	}
}

// matchDecoded reads decoded text with the plain rules and records one
// hit spanning content[s:e) when it holds injection text. The plain
// rules' anchors do not include the encoded words: no recursion.
func (c *injCollector) matchDecoded(dec []byte, s, e int, encoding string) {
	text, _ := normalize(dec, 0)
	for _, h := range matchText(text, nil, 0, nil, c.budget) {
		if injRules[h.rule].id == RuleEncoded {
			continue
		}
		h.start, h.end, h.wrapper, h.hidden, h.encoding = s, e, RuleEncoded, false, encoding
		c.add(h)
		return
	}
}

func allHex(b []byte) bool {
	for _, c := range b {
		if !isHex(c) {
			return false
		}
	}
	return true
}

func isBase32(b []byte) bool {
	for _, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// textLike reports whether decoded bytes read as text (see
// decodeBase64Text).
func textLike(dec []byte) bool {
	if len(dec) < 16 || !utf8.Valid(dec) {
		return false
	}
	printable := 0
	for _, c := range dec {
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' || c == '\r' || c >= 0x80 {
			printable++
		}
	}
	return printable*100 >= len(dec)*95
}
