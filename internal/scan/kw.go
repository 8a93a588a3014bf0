package scan

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
	// triSlot maps hash(t) to 1 + an index into triKW (0: none); keywords
	// sharing a hash share a list.
	triSlot []uint16
	triKW   [][]int
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
func fold(c byte) uint32 { return uint32(c | 0x20) }

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
	m := &kwMatcher{pairKW: map[uint32][]int{}, triSlot: make([]uint16, 1<<18)}
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
		if m.triSlot[h] == 0 {
			m.triKW = append(m.triKW, nil)
			m.triSlot[h] = uint16(len(m.triKW))
			m.triNext = append(m.triNext, [4]uint64{})
		}
		l := m.triSlot[h] - 1
		m.triKW[l] = append(m.triKW[l], idx)
		ft := fold(b[0])<<16 | fold(b[1])<<8 | fold(b[2])
		if len(b) == 3 {
			m.triNext[l] = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
			for c := range 256 {
				q := quadHash(ft<<8 | fold(byte(c)))
				m.quad[q>>6] |= 1 << (q & 63)
			}
		} else {
			q := quadHash(ft<<8 | fold(b[3]))
			m.quad[q>>6] |= 1 << (q & 63)
			m.triNext[l][b[3]>>6] |= 1 << (b[3] & 63)
		}
	}
	return m
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
		for i, c := range b[3:] { // position i, fourth byte c
			h = h<<8 | fold(c)
			q, p := quadHash(h), h>>16
			if m.quad[q>>6]&(1<<(q&63)) == 0 && m.fpair[p>>6]&(1<<(p&63)) == 0 {
				continue
			}
			m.at(b, i, fn)
		}
		at = n - 3
	}
	for ; at+1 < n; at++ {
		m.at(b, at, fn)
	}
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
	l := int(m.triSlot[th]) - 1
	if at+3 < n { // else only three-byte keywords fit: the fourth-byte filter does not apply
		if next := lowerTable[b[at+3]]; m.triNext[l][next>>6]&(1<<(next&63)) == 0 {
			return // no keyword of the list has this fourth byte
		}
	}
	for _, k := range m.triKW[l] {
		kw := m.kws[k]
		if len(kw) > n-at {
			continue
		}
		ok := true
		for j := 0; j < len(kw); j++ { // the hash may collide: compare all
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
