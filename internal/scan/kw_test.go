package scan

import (
	"bytes"
	"math/rand"
	"sort"
	"testing"
)

// naiveFind is the reference for kwMatcher.find: every occurrence of every
// keyword, by offset, then by keyword length, then by keyword index.
func naiveFind(kws []string, b []byte) [][2]int {
	low := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	var out [][2]int
	for off := range low {
		for l := 2; l <= len(low)-off; l++ {
			for i, k := range kws {
				if len(k) == l && bytes.HasPrefix(low[off:], []byte(k)) {
					out = append(out, [2]int{off, i})
				}
			}
			if l > 64 {
				break
			}
		}
	}
	return out
}

// TestKWMatcherMatchesNaive: find reports exactly the occurrences a naive
// search finds, in order, on random text built from keyword fragments.
func TestKWMatcherMatchesNaive(t *testing.T) {
	kws := []string{"s.", "sk", "ey", "q~", "api", "key", "you", "sh ", "api-", "api_org_", "send", "sendbird",
		"xoxe-", "xoxe.xoxb-", "-----begin", "curl", "do not", "don't", "python", "python3", "hvs.", "ab", "abc", "abcd", "abcde"}
	m := newKWMatcher(kws)
	rng := rand.New(rand.NewSource(1))
	frags := append([]string{" ", "\n", "A", "S", "K", "X", ".", "-", "\xff", "é", "Ey", "API"}, kws...)
	for n := 0; n < 3000; n++ {
		var b []byte
		for j := rng.Intn(20); j >= 0; j-- {
			f := frags[rng.Intn(len(frags))]
			if rng.Intn(3) == 0 && len(f) > 1 {
				f = f[:1+rng.Intn(len(f)-1)]
			}
			if rng.Intn(2) == 0 {
				f = string(bytes.ToUpper([]byte(f)))
			}
			b = append(b, f...)
		}
		var got [][2]int
		m.find(b, func(off, k int) { got = append(got, [2]int{off, k}) })
		for i := 1; i < len(got); i++ {
			if got[i][0] < got[i-1][0] {
				t.Fatalf("%q: offsets out of order: %v", b, got)
			}
		}
		sort.SliceStable(got, func(i, j int) bool {
			if got[i][0] != got[j][0] {
				return got[i][0] < got[j][0]
			}
			if len(m.kws[got[i][1]]) != len(m.kws[got[j][1]]) {
				return len(m.kws[got[i][1]]) < len(m.kws[got[j][1]])
			}
			return got[i][1] < got[j][1]
		})
		want := naiveFind(m.kws, b)
		if len(got) != len(want) {
			t.Fatalf("%q: got %v, want %v", b, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: got %v, want %v", b, got, want)
			}
		}
	}
}
