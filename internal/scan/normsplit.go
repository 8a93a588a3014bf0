package scan

import "bytes"

// Phrases split by markdown structure and words in leetspeak.
//
// A renderer, and a model, read "[Ignore](a) [all previous](b)
// [instructions](c)" as one sentence, table cells in a row as words in a
// line, blockquote and list markers at line starts as nothing, a word
// hyphenated across a line break as one word, <br> and block tags as
// breaks and HTML comments as nothing. normalize reads through these
// (skipStructure) wherever it runs; the injection scanner also normalises
// the lines around an override anchor that hold such structure
// (structPass), which is where a split phrase can hide.
//
// Leetspeak ("1gn0r3 4ll pr3v10us 1nstruct10ns") is read in a second
// reading of normalised text (leetRead) where a word mixes letters and
// digits or symbols standing for letters.

// structSpecial marks the bytes that may start structure normalize reads
// through.
var structSpecial = func() (t [256]bool) {
	for _, c := range "[]!|\n-" {
		t[c] = true
	}
	return t
}()

// maxLinkTarget bounds the "(url)" part of a markdown link.
const maxLinkTarget = 512

// skipStructure returns the length of the structure starting at b[i] and
// the byte it reads as (0: nothing): link and image brackets and targets,
// table cell bars, line-start blockquote and list markers (after a
// newline, kept), and a hyphen ending a line inside a word.
func skipStructure(b []byte, i int) (n int, as byte) {
	switch b[i] {
	case '[':
		if linkClose(b, i) > 0 {
			return 1, 0
		}
	case '!':
		if i+1 < len(b) && b[i+1] == '[' && linkClose(b, i+1) > 0 {
			return 2, 0
		}
	case ']':
		if i+1 < len(b) && b[i+1] == '(' {
			for j := i + 2; j < len(b) && j-i < maxLinkTarget; j++ {
				switch b[j] {
				case ')':
					return j + 1 - i, 0
				case '\n':
					return 0, 0
				}
			}
		}
		if i+1 < len(b) && b[i+1] == '[' {
			if j := bytes.IndexByte(b[i+2:min(len(b), i+66)], ']'); j >= 0 {
				return j + 3, 0
			}
		}
	case '|':
		if inTableRow(b, i) {
			return 1, '\n'
		}
	case '\n':
		j := i + 1
		for {
			k := j
			for k < len(b) && (b[k] == ' ' || b[k] == '\t') {
				k++
			}
			switch {
			case k < len(b) && b[k] == '>':
				j = k + 1
				continue
			case k+1 < len(b) && (b[k] == '-' || b[k] == '*' || b[k] == '+') && b[k+1] == ' ':
				j = k + 2
				continue
			}
			break
		}
		if j > i+1 {
			return j - i, '\n'
		}
	case '-':
		if i > 0 && isASCIILetter(b[i-1]) && i+2 < len(b) && b[i+1] == '\n' {
			k := i + 2
			for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '>') {
				k++
			}
			if k < len(b) && isASCIILetter(b[k]) && b[k] >= 'a' {
				return k - i, 0
			}
		}
	}
	return 0, 0
}

// linkClose returns the offset of the "](" closing the link text opened
// at b[i] == '[' on the same line, or 0.
func linkClose(b []byte, i int) int {
	for j := i + 1; j+1 < len(b) && j-i < 256; j++ {
		switch b[j] {
		case ']':
			if b[j+1] == '(' || b[j+1] == '[' {
				return j
			}
			return 0
		case '\n', '[':
			return 0
		}
	}
	return 0
}

// inTableRow reports whether b[i] lies on a table row: a line that
// starts and ends with '|' (after and before spaces), at most 512 bytes
// either side.
func inTableRow(b []byte, i int) bool {
	j := i
	for j > 0 && i-j < 512 && b[j-1] != '\n' {
		j--
	}
	for j < i && (b[j] == ' ' || b[j] == '\t') {
		j++
	}
	k := i
	for k < len(b) && k-i < 512 && b[k] != '\n' {
		k++
	}
	for k > i+1 && (b[k-1] == ' ' || b[k-1] == '\t' || b[k-1] == '\r') {
		k--
	}
	return j <= i && b[j] == '|' && k > i && b[k-1] == '|'
}

// blockTag reports whether the HTML tag b[i:i+n] breaks a line when
// rendered (br, p, div, li, td, th, tr, hr).
func blockTag(b []byte, i, n int) bool {
	j := i + 1
	if j < i+n && b[j] == '/' {
		j++
	}
	k := j
	for k < i+n && isASCIILetter(b[k]) {
		k++
	}
	switch string(bytes.ToLower(b[j:k])) {
	case "br", "p", "div", "li", "td", "th", "tr", "hr":
		return true
	}
	return false
}

// htmlCommentLen returns the length of the HTML comment starting at b[i],
// up to its end on the same or the next line, or 0.
func htmlCommentLen(b []byte, i int) int {
	if !bytes.HasPrefix(b[i:], []byte("<!--")) {
		return 0
	}
	e := bytes.Index(b[i+4:min(len(b), i+4+maxTag)], []byte("-->"))
	if e < 0 {
		return 0
	}
	return e + 7
}

// leetOf maps a digit or symbol to the letter it stands for in leetspeak.
var leetOf = func() (t [256]byte) {
	for _, p := range []string{"0o", "1i", "3e", "4a", "5s", "7t", "@a", "$s", "|i", "!i"} {
		t[p[0]] = p[1]
	}
	return t
}()

// leetRead returns normalised text t with every word that mixes letters
// and leetspeak characters (at least two letters, at least one leet
// character between two letters) spelled in letters, or nil when there is
// no such word. Offsets are unchanged (one byte for one byte).
func leetRead(t []byte) []byte {
	var out []byte
	for i := 0; i < len(t); {
		if !(isASCIILetter(t[i]) || leetOf[t[i]] != 0) {
			i++
			continue
		}
		j := i
		letters, inner := 0, false
		for j < len(t) && (isASCIILetter(t[j]) || leetOf[t[j]] != 0) {
			if isASCIILetter(t[j]) {
				letters++
			} else if j > i && isASCIILetter(t[j-1]) && j+1 < len(t) && isASCIILetter(t[j+1]) {
				inner = true
			}
			j++
		}
		if letters >= 2 && inner {
			if out == nil {
				out = append([]byte(nil), t...)
			}
			for k := i; k < j; k++ {
				if c := leetOf[t[k]]; c != 0 {
					out[k] = c
				}
			}
		}
		i = j
	}
	// Words of leet characters and letters next to a converted word (4ll,
	// @ll) are converted too.
	if out != nil {
		for i := 0; i < len(out); {
			if !(isASCIILetter(out[i]) || leetOf[out[i]] != 0) {
				i++
				continue
			}
			j, letters, leet := i, 0, 0
			for j < len(out) && (isASCIILetter(out[j]) || leetOf[out[j]] != 0) {
				if isASCIILetter(out[j]) {
					letters++
				} else {
					leet++
				}
				j++
			}
			if letters >= 2 && leet > 0 && leet < letters {
				for k := i; k < j; k++ {
					if c := leetOf[out[k]]; c != 0 {
						out[k] = c
					}
				}
			}
			i = j
		}
	}
	return out
}

// leetDisguise reports whether b[i] (a leet character) sits between two
// ASCII letters: a word that may be leetspeak.
func leetDisguise(b []byte, i int) bool {
	return i > 0 && i+1 < len(b) && isASCIILetter(b[i-1]) && isASCIILetter(b[i+1])
}
