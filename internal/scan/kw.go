package scan

import "math/bits"

// kwMatcher finds ASCII keywords case-insensitively. It is the prefilter of
// the injection and secrets scanners: their regular expressions only run
// near a keyword. Each position costs a rolling four-byte key and two
// bitset probes (a hash of the four bytes, the first two bytes); where one
// passes, two-byte keywords are looked up by their pair, longer ones by (a
// hash of) their first three bytes, then filtered on their fourth byte, and
// only then compared in full.
type kwMatcher struct {
	kws    []string         // lower case, len >= 2
	pair   [1024]uint64     // bit p: some two-byte keyword is p
	pairKW map[uint32][]int // pair -> keyword indices
	tri    [1 << 12]uint64  // bit hash(t): some longer keyword starts with t
	// triRank[w] counts the bits of tri set in its words before w: the
	// list of a set bit h is triKW[triRank[h>>6] + the set bits of its
	// word below h] (8 KB read at a passing position, where a table indexed
	// by the hash would be 512 KB: a cache miss each). Keywords sharing a
	// hash share a list, in keyword order.
	triRank [1 << 12]uint16
	triKW   [][]int
	// head[k]: the first four bytes of keyword k (lower case, little
	// endian; the three of a three-byte keyword), headMask the bytes that
	// count: at compares them in one step before the rest.
	head, headMask []uint32
	// triNext[list]: the lower-cased fourth bytes the keywords of triKW[list]
	// have (every byte when one of them is three bytes long), a second
	// filter before the keywords are compared.
	triNext [][4]uint64
	// quad bit quadHash(q): some keyword of four bytes or more starts with
	// q, or some three-byte keyword with q's first three bytes. The one probe
	// (beside pair) at positions followed by four bytes: it passes far fewer
	// positions than the trigram alone (common words share a keyword's first
	// three letters, rarely its fourth).
	quad [1 << 12]uint64
	// fpair is pair for the filter of find, on bytes folded with fold.
	fpair [1024]uint64
}

// fold maps a byte for find's filter: ASCII upper-case letters to lower
// case with one OR (other bytes may collide, e.g. '@' with '`': the
// filter only has to pass every keyword position, at compares exactly).
func fold(c byte) uint32 { return uint32(c) | 0x20 }

var lowerTable = func() (t [256]byte) {
	for i := range t {
		c := byte(i)
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		t[i] = c
	}
	return t
}()

func triHash(t uint32) uint32 { return (t * 0x9E3779B1) >> (32 - 18) }

func quadHash(q uint32) uint32 { return (q * 0x85EBCA6B) >> (32 - 18) }

func newKWMatcher(kws []string) *kwMatcher {
	m := &kwMatcher{pairKW: map[uint32][]int{}}
	byHash := map[uint32][]int{} // trigram hash -> keyword indices
	for _, k := range kws {
		b := []byte(k)
		for i := range b {
			b[i] = lowerTable[b[i]]
		}
		if len(b) < 2 {
			panic("scan: keyword shorter than two bytes: " + k)
		}
		idx := len(m.kws)
		m.kws = append(m.kws, string(b))
		var head, mask uint32
		for j := 0; j < len(b) && j < 4; j++ {
			head |= uint32(b[j]) << (8 * j)
			mask |= 0xff << (8 * j)
		}
		m.head, m.headMask = append(m.head, head), append(m.headMask, mask)
		if len(b) == 2 {
			p := uint32(b[0])<<8 | uint32(b[1])
			m.pair[p>>6] |= 1 << (p & 63)
			fp := fold(b[0])<<8 | fold(b[1])
			m.fpair[fp>>6] |= 1 << (fp & 63)
			m.pairKW[p] = append(m.pairKW[p], idx)
			continue
		}
		t := uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
		h := triHash(t)
		m.tri[h>>6] |= 1 << (h & 63)
		byHash[h] = append(byHash[h], idx)
		ft := fold(b[0])<<16 | fold(b[1])<<8 | fold(b[2])
		if len(b) == 3 {
			for c := range 256 {
				q := quadHash(ft<<8 | fold(byte(c)))
				m.quad[q>>6] |= 1 << (q & 63)
			}
		} else {
			q := quadHash(ft<<8 | fold(b[3]))
			m.quad[q>>6] |= 1 << (q & 63)
		}
	}
	// The lists in hash order, as triList finds them.
	n := 0
	for w, set := range m.tri {
		m.triRank[w] = uint16(n)
		for ; set != 0; set &= set - 1 {
			h := uint32(w<<6 + bits.TrailingZeros64(set))
			var next [4]uint64
			for _, k := range byHash[h] {
				if kw := m.kws[k]; len(kw) == 3 {
					next = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
				} else {
					next[kw[3]>>6] |= 1 << (kw[3] & 63)
				}
			}
			m.triKW = append(m.triKW, byHash[h])
			m.triNext = append(m.triNext, next)
			n++
		}
	}
	return m
}

// triList returns the index into triKW of the keywords whose first three
// bytes hash to th, a set bit of tri.
func (m *kwMatcher) triList(th uint32) int {
	w := th >> 6
	return int(m.triRank[w]) + bits.OnesCount64(m.tri[w]&(1<<(th&63)-1))
}

// find calls fn with the offset and index of every keyword occurrence, in
// non-decreasing offset order (overlapping occurrences included; at one
// offset the two-byte keywords first). Where four bytes remain, a position
// costs a rolling four-byte key and the quad and pair probes; the positions
// that pass (and the last three) go to at.
func (m *kwMatcher) find(b []byte, fn func(off, kw int)) {
	n := len(b)
	at := 0
	if n >= 4 {
		h := fold(b[0])<<16 | fold(b[1])<<8 | fold(b[2])
		for i := 3; ; i++ { // i: the fourth byte of position i-3
			if i, h = m.skip(b, i, h); i >= n {
				break
			}
			m.at(b, i-3, fn)
		}
		at = n - 3
	}
	for ; at+1 < n; at++ {
		m.at(b, at, fn)
	}
}

// skip returns the first i at or after from whose position i-3 passes
// the quad or the pair probe (len(b) when none does), and h rolled on to
// b[i] (h holds the folded bytes before from). The loop makes no call, so
// its state stays in registers.
func (m *kwMatcher) skip(b []byte, from int, h uint32) (int, uint32) {
	quad, fpair := &m.quad, &m.fpair
	if from < 0 {
		from = 0
	}
	for i, c := range b[from:] {
		h = h<<8 | fold(c)
		q, p := quadHash(h), h>>16
		if quad[q>>6]&(1<<(q&63)) != 0 || fpair[p>>6]&(1<<(p&63)) != 0 {
			return from + i, h
		}
	}
	return len(b), h
}

// at calls fn for the keywords occurring at offset at of b (at+1 < len(b)),
// two-byte keywords first.
func (m *kwMatcher) at(b []byte, at int, fn func(off, kw int)) {
	n := len(b)
	p := uint32(lowerTable[b[at]])<<8 | uint32(lowerTable[b[at+1]])
	if m.pair[p>>6]&(1<<(p&63)) != 0 {
		for _, k := range m.pairKW[p] {
			fn(at, k)
		}
	}
	if at+2 >= n {
		return
	}
	th := triHash(p<<8 | uint32(lowerTable[b[at+2]]))
	if m.tri[th>>6]&(1<<(th&63)) == 0 {
		return
	}
	l := m.triList(th)
	var w uint32 // the bytes at at, lower case, little endian
	if at+3 < n {
		next := lowerTable[b[at+3]]
		if m.triNext[l][next>>6]&(1<<(next&63)) == 0 {
			return // no keyword of the list has this fourth byte
		}
		w = p>>8 | (p&0xff)<<8 | uint32(lowerTable[b[at+2]])<<16 | uint32(next)<<24
	} else { // only three-byte keywords fit: the fourth-byte filter does not apply
		w = p>>8 | (p&0xff)<<8 | uint32(lowerTable[b[at+2]])<<16
	}
	for _, k := range m.triKW[l] {
		kw := m.kws[k]
		if len(kw) > n-at || w&m.headMask[k] != m.head[k] {
			continue // the hash may collide: the head compares all of short keywords
		}
		ok := true
		for j := 4; j < len(kw); j++ {
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
