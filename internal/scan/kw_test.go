package scan

import (
	"bytes"
	"math/rand"
	"sort"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/corpustest"
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

// fragText joins 1 to n random fragments of frags, each maybe cut short
// and maybe upper-cased.
func fragText(rng *rand.Rand, frags []string, n int) []byte {
	var b []byte
	for j := rng.Intn(n); j >= 0; j-- {
		f := frags[rng.Intn(len(frags))]
		if rng.Intn(3) == 0 && len(f) > 1 {
			f = f[:1+rng.Intn(len(f)-1)]
		}
		if rng.Intn(2) == 0 {
			f = string(bytes.ToUpper([]byte(f)))
		}
		b = append(b, f...)
	}
	return b
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
		b := fragText(rng, frags, 20)
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

// TestFirstSpecialMatchesTable: the word-at-a-time firstSpecial agrees with
// asciiTable byte by byte.
func TestFirstSpecialMatchesTable(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for n := 0; n < 20000; n++ {
		b := make([]byte, rng.Intn(40))
		for i := range b {
			b[i] = byte(0x20 + rng.Intn(0x5f))
			if rng.Intn(30) == 0 {
				b[i] = byte(rng.Intn(256))
			}
		}
		want := -1
		for i, c := range b {
			if asciiTable[c] {
				want = i
				break
			}
		}
		if got := firstSpecial(b); got != want {
			t.Fatalf("%q: got %d, want %d", b, got, want)
		}
	}
}

// TestSpecialIndexNext: the index answers like firstSpecial, listed or (past
// maxSpecialList marked bytes) searching, also when asked out of order.
func TestSpecialIndexNext(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	for _, size := range []int{0, 1, 100, 5000, 3 * maxSpecialList} {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(0x20 + rng.Intn(0x5f))
			if size > maxSpecialList || rng.Intn(20) == 0 {
				b[i] = byte(rng.Intn(256))
			}
		}
		x := newSpecialIndex(b)
		if size > maxSpecialList && x.offs != nil {
			t.Fatalf("size %d: %d offsets listed, want the search fallback", size, len(x.offs))
		}
		c := x.cursor()
		for n := 0; n < 2000; n++ {
			i := rng.Intn(size + 2)
			want := -1
			if i < len(b) {
				if k := firstSpecial(b[i:]); k >= 0 {
					want = i + k
				}
			}
			if got := c.next(i); got != want {
				t.Fatalf("size %d: next(%d) = %d, want %d", size, i, got, want)
			}
		}
	}
}

// findRef is the previous kwMatcher.find (trigram probe at every position,
// then the pair probe), kept as the reference for the quad-probe fast path.
func (m *kwMatcher) findRef(b []byte, fn func(off, kw int)) {
	var h uint32
	for i := 0; i < len(b); i++ {
		h = (h<<8 | uint32(lowerTable[b[i]])) & 0xffffff
		if i < 1 {
			continue
		}
		if i >= 2 {
			if th := triHash(h); m.tri[th>>6]&(1<<(th&63)) != 0 {
				at := i - 2
				l := m.triList(th)
				var next byte
				if i+1 < len(b) {
					next = lowerTable[b[i+1]]
				}
				var list []int
				if i+1 >= len(b) || m.triNext[l][next>>6]&(1<<(next&63)) != 0 {
					list = m.triKW[l]
				}
				for _, k := range list {
					kw := m.kws[k]
					if len(kw) > len(b)-at {
						continue
					}
					ok := true
					for j := 0; j < len(kw); j++ {
						if lowerTable[b[at+j]] != kw[j] {
							ok = false
							break
						}
					}
					if ok {
						fn(at, k)
					}
				}
			}
		}
		if p := h & 0xffff; m.pair[p>>6]&(1<<(p&63)) != 0 {
			for _, k := range m.pairKW[p] {
				fn(i-1, k)
			}
		}
	}
}

// TestKWFindMatchesRef: find (quad probe, then at) reports exactly what
// the previous trigram-at-every-position find reports, in the same order,
// with the pipeline's real keyword set, on random text made of keyword
// fragments, on random bytes and on every corpus file (whole and cut at
// every length near its end).
func TestKWFindMatchesRef(t *testing.T) {
	e, err := sharedSecrets()
	if err != nil {
		t.Fatal(err)
	}
	m := e.all
	check := func(t *testing.T, b []byte) {
		t.Helper()
		var got, want [][2]int
		m.find(b, func(off, k int) { got = append(got, [2]int{off, k}) })
		m.findRef(b, func(off, k int) { want = append(want, [2]int{off, k}) })
		if len(got) != len(want) {
			t.Fatalf("%.200q: %d hits, reference %d", b, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%.200q: hit %d = %v, reference %v", b, i, got[i], want[i])
			}
		}
	}
	rng := rand.New(rand.NewSource(11))
	frags := []string{" ", "\n", "\t", "A", "E", "Y", "S", "K", "Q~", ".", "-", "_", "\xff", "é", "ent", "---", "you", "act", "new"}
	frags = append(frags, m.kws...)
	for n := 0; n < 20000; n++ {
		b := fragText(rng, frags, 12)
		check(t, b)
		r := make([]byte, rng.Intn(16))
		for i := range r {
			r[i] = byte(rng.Intn(256))
		}
		check(t, r)
	}
	corpustest.Each(t, func(t *testing.T, lib corpustest.Library) {
		files := libraryFiles(t, lib)
		var names []string
		for name := range files {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			b := files[name]
			check(t, b)
			for cut := max(0, len(b)-6); cut < len(b); cut++ {
				check(t, b[:cut])
			}
			check(t, bytes.ToUpper(b))
		}
	})
}
