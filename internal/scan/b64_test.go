package scan

import (
	"math/rand"
	"slices"
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
		for e < len(b) && b64Table[b[e]] {
			e++
		}
		if e-i >= minBase64 && b64Mixed(b[i:e]) {
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
		sameRanges(t, b, base64Blobs(b), base64BlobsByByte(b))
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

// TestBase64BlobsClasses: which runs of base64 characters count as blobs
// (base64BlobsByByte shares b64Mixed with base64Blobs, so the rule is
// pinned here on its own).
func TestBase64BlobsClasses(t *testing.T) {
	for _, c := range []struct {
		run  string
		blob bool
	}{
		{"abcdefghijklmnopqrstuvwx", false}, // one case only: a word
		{"ABCDEFGHIJKLMNOPQRSTUVWX", false},
		{"abcdefghijklmnopqrstuvwX", true}, // both cases
		{"Abcdefghijklmnopqrstuvwx", true},
		{"abcdefghijklmnopqrstuvw0", true}, // a digit
		{"abcdefghijklmnopqrstuvw+", true},
		{"abcdefghijklmnopqrstuvw/", true},
		{"abcdefghijklmnopqrstuvw-", true},
		{"abcdefghijklmnopqrstuvw_", true},
		{"ABCDEFGHIJKLMNOPQRSTUVW=", true},
		{"012345678901234567890123", true},
		{"abcdefghijklmnopqrstuvX", false}, // 23 characters: too short
	} {
		b := []byte("x " + c.run + " y")
		got := base64Blobs(b)
		want := [][2]int(nil)
		if c.blob {
			want = [][2]int{{2, 2 + len(c.run)}}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: got %v, want %v", c.run, got, want)
		}
		if by := base64BlobsByByte(b); !slices.Equal(by, want) {
			t.Errorf("%q: by byte %v, want %v", c.run, by, want)
		}
	}
}
