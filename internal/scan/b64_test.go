package scan

import (
	"math/rand"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/corpustest"
)

// base64BlobsByByte is the byte-at-a-time definition base64Blobs must agree
// with: every maximal run of base64 characters at least minBase64 long
// holding a digit, '+', '/', '-', '_' or '=', or both cases.
func base64BlobsByByte(b []byte) [][2]int {
	var out [][2]int
	for i := 0; i < len(b); {
		if !b64Table[b[i]] {
			i++
			continue
		}
		e := i
		var upper, lower, other bool
		for e < len(b) && b64Table[b[e]] {
			switch c := b[e]; {
			case c >= 'A' && c <= 'Z':
				upper = true
			case c >= 'a' && c <= 'z':
				lower = true
			default:
				other = true
			}
			e++
		}
		if e-i >= minBase64 && (other || upper && lower) {
			out = append(out, [2]int{i, e})
		}
		i = e
	}
	return out
}

func TestBase64BlobsMatchesBytes(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	frags := []string{"aGVsbG8gd29ybGQ", "QUJD", "abc", "XYZ", "09", "+/", "-_=", " ", "\n", ".", "é", "\x00", "!", "~"}
	check := func(t *testing.T, b []byte) {
		t.Helper()
		got, want := base64Blobs(b), base64BlobsByByte(b)
		if len(got) != len(want) {
			t.Fatalf("%q: got %v, want %v", b, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: got %v, want %v", b, got, want)
			}
		}
	}
	for n := 0; n < 30000; n++ {
		var b []byte
		for j := rng.Intn(30); j >= 0; j-- {
			b = append(b, frags[rng.Intn(len(frags))]...)
		}
		check(t, b)
	}
	corpustest.Each(t, func(t *testing.T, lib corpustest.Library) {
		md := libraryMarkdown(t, lib)
		if len(base64Blobs(md)) == 0 {
			t.Fatal("no base64-like blob in the library's Markdown")
		}
		check(t, md)
	})
}
