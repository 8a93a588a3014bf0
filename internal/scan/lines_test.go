package scan

import (
	"bytes"
	"math/rand"
	"testing"
	"unicode/utf8"
)

// TestLinesLazy: positions and line bounds from the lazily built index
// agree with a direct count, whatever order offsets are asked in.
func TestLinesLazy(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	frags := []string{"a", "é", "\n", "\n\n", "xyz", "\r\n", "\xff"}
	for n := 0; n < 3000; n++ {
		var b []byte
		for j := rng.Intn(30); j >= 0; j-- {
			b = append(b, frags[rng.Intn(len(frags))]...)
		}
		ln := newLines(b)
		for q := 0; q < 5; q++ {
			off := rng.Intn(len(b) + 1)
			for off > 0 && off < len(b) && !utf8.RuneStart(b[off]) {
				off-- // findings start at rune boundaries
			}
			wantLine := bytes.Count(b[:off], []byte("\n")) + 1
			ls := bytes.LastIndexByte(b[:off], '\n') + 1
			wantCol := utf8.RuneCount(b[ls:off]) + 1
			line, col := ln.pos(off)
			if line != wantLine || col != wantCol {
				t.Fatalf("%q: pos(%d) = %d:%d, want %d:%d", b, off, line, col, wantLine, wantCol)
			}
			le := len(b)
			if i := bytes.IndexByte(b[off:], '\n'); i >= 0 {
				le = off + i
			}
			if s, e := ln.bounds(line - 1); s != ls || e != le {
				t.Fatalf("%q: bounds(%d) = %d,%d, want %d,%d", b, line-1, s, e, ls, le)
			}
		}
	}
}
