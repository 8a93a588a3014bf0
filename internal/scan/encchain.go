package scan

import (
	"bytes"
	"encoding/base32"
	"encoding/hex"
	"strconv"
	"strings"
)

// Nested encodings: a blob is decoded by whichever of base64, hex and
// base32 reads it as text, and the decoded text is read by the plain rules;
// when they find nothing there, it is read again ROT13'd and backwards, and
// the blobs inside it (another base64, hex or base32 run, a run of URL
// escapes, a list of character codes) are decoded in turn, up to
// maxDecodeDepth levels. Runs of URL escapes and character-code lists are
// found in the same stretches of non-space bytes as base64 blobs
// (encodedRuns).

// maxDecodeDepth bounds the levels of nested encodings read.
const maxDecodeDepth = 3

// decodeBlob decodes a base64-alphabet blob as hex (an even run of hex
// digits), base64 or base32, whichever reads as text first; nil when none
// does.
func decodeBlob(blob []byte) ([]byte, string) {
	t := bytes.TrimRight(blob, "=")
	if len(t)%2 == 0 && allHex(t) {
		if d, err := hex.DecodeString(string(t)); err == nil && textLike(d) {
			return d, "hex"
		}
	}
	if d := decodeBase64Text(blob); d != nil {
		return d, "base64"
	}
	up := bytes.ToUpper(t)
	if (bytes.Equal(up, t) || bytes.Equal(bytes.ToLower(t), t)) && isBase32(up) {
		if d, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(string(up)); err == nil && textLike(d) {
			return d, "base32"
		}
	}
	return nil, ""
}

// decodeStretch decodes a stretch of non-space bytes that is a run of URL
// escapes (%53%57…) or a list of character codes (73,103,110,…), or
// returns nil. Such a stretch holds at least 12 escapes or codes.
func decodeStretch(s []byte) ([]byte, string) {
	if i := bytes.Index(s, []byte("%")); i >= 0 && bytes.Count(s, []byte("%")) >= 12 {
		var out []byte
		run := 0
		for j := i; j+2 < len(s) && s[j] == '%'; j += 3 {
			h, l := hexVal(s[j+1]), hexVal(s[j+2])
			if h < 0 || l < 0 {
				break
			}
			out = append(out, byte(h<<4|l))
			run++
		}
		if run >= 12 && textLike(out) {
			return out, "URL escapes"
		}
	}
	if bytes.Count(s, []byte(",")) >= 11 {
		s = bytes.ReplaceAll(s, []byte(", "), []byte(","))
		// The longest list of decimal numbers, comma separated.
		best, cur := []byte(nil), []byte(nil)
		for _, f := range bytes.FieldsFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r == ',') }) {
			cur = cur[:0]
			ok := true
			for _, n := range bytes.Split(f, []byte(",")) {
				v, err := strconv.Atoi(string(n))
				if err != nil || v < 9 || v > 126 {
					ok = false
					break
				}
				cur = append(cur, byte(v))
			}
			if ok && len(cur) > len(best) {
				best = append([]byte(nil), cur...)
			}
		}
		if len(best) >= 12 && textLike(best) {
			return best, "character codes"
		}
	}
	return nil, ""
}

// readDecoded reads decoded text with the plain rules (not the encoded
// words: no recursion through them) and returns the first hit; when there
// is none, its ROT13 and backwards readings and the encodings inside it,
// down to maxDecodeDepth. name is the chain of encodings read so far.
func readDecoded(dec []byte, name string, depth int, budget *int) (injHit, string, bool) {
	*budget -= len(dec)
	if *budget < 0 {
		return injHit{}, "", false
	}
	if h, ok := plainHit(dec, budget); ok {
		return h, name, true
	}
	if depth >= maxDecodeDepth {
		return injHit{}, "", false
	}
	for _, tr := range []encodedDecoder{{rot13, "ROT13"}, {reverseRunes, "reversed"}} {
		if h, ok := plainHit(tr.decode(dec), budget); ok {
			return h, name + ", " + tr.name, true
		}
	}
	for _, st := range stretches(dec) {
		if d, n := decodeStretch(dec[st[0]:st[1]]); d != nil {
			if h, chain, ok := readDecoded(d, name+", "+n, depth+1, budget); ok {
				return h, chain, true
			}
		}
		for _, b := range base64Runs(dec, st[0], st[1], nil) {
			if d, n := decodeBlob(dec[b[0]:b[1]]); d != nil {
				if h, chain, ok := readDecoded(d, name+", "+n, depth+1, budget); ok {
					return h, chain, true
				}
			}
		}
	}
	return injHit{}, "", false
}

// plainHit returns the first hit of the plain rules in t, normalised.
func plainHit(t []byte, budget *int) (injHit, bool) {
	text, _ := normalize(t, 0)
	for _, h := range matchText(text, nil, 0, nil, budget) {
		if injRules[h.rule].id != RuleEncoded {
			return h, true
		}
	}
	return injHit{}, false
}

// stretches returns the [start, end) ranges of the runs of printable
// non-space ASCII in b at least minStretch bytes long.
func stretches(b []byte) [][2]int {
	var out [][2]int
	for i := 0; i < len(b); {
		if !(b[i] > 0x20 && b[i] < 0x7f) {
			i++
			continue
		}
		j := i
		for j < len(b) && b[j] > 0x20 && b[j] < 0x7f {
			j++
		}
		if j-i >= minStretch {
			out = append(out, [2]int{i, j})
		}
		i = j
	}
	return out
}

// minStretch is the shortest stretch searched for encodings.
const minStretch = 16

// encodingName is the name of a finding's chain of encodings.
func encodingName(chain string) string { return strings.TrimPrefix(chain, ", ") }
