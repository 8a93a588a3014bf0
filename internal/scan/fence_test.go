package scan

import (
	"bytes"
	"math/rand"
	"slices"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/corpustest"
)

// fencedRangesByLine is the line-by-line definition fencedRanges must
// agree with.
func fencedRangesByLine(b []byte) [][2]int {
	var out [][2]int
	open := -1
	var fence []byte
	for off := 0; off < len(b); {
		le := bytes.IndexByte(b[off:], '\n')
		end := len(b)
		if le >= 0 {
			end = off + le
		}
		line := bytes.TrimLeft(b[off:end], " ")
		if open < 0 {
			if bytes.HasPrefix(line, []byte("```")) || bytes.HasPrefix(line, []byte("~~~")) {
				open, fence = end, line[:3]
			}
		} else if bytes.HasPrefix(line, fence) {
			out = append(out, [2]int{open, off})
			open = -1
		}
		off = end + 1
	}
	if open >= 0 {
		out = append(out, [2]int{open, len(b)})
	}
	return out
}

// sameRanges fails the test unless got and want, the ranges two
// implementations find in b, are the same.
func sameRanges(t *testing.T, b []byte, got, want [][2]int) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%q: got %v, want %v", b, got, want)
	}
}

func TestFencedRangesMatchesLines(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	frags := []string{"```", "~~~", "``", "~", "`", " ", "  ", "\n", "x", "go", "\r\n", "\t"}
	for n := 0; n < 50000; n++ {
		var b []byte
		for j := rng.Intn(16); j >= 0; j-- {
			b = append(b, frags[rng.Intn(len(frags))]...)
		}
		sameRanges(t, b, fencedRanges(b), fencedRangesByLine(b))
	}
	corpustest.Each(t, func(t *testing.T, lib corpustest.Library) {
		md := libraryMarkdown(t, lib)
		got, want := fencedRanges(md), fencedRangesByLine(md)
		if len(got) != len(want) || len(got) == 0 {
			t.Fatalf("%d ranges, want %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("range %d: got %v, want %v", i, got[i], want[i])
			}
		}
	})
}
