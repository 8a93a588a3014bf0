package scan

// kwMatcher finds ASCII keywords case-insensitively. It is the prefilter of
// the injection and secrets scanners: their regular expressions only run
// near a keyword. Each position costs a rolling three-byte key and two
// bitset probes: two-byte keywords are looked up by their pair, longer ones
// by (a hash of) their first three bytes, then filtered on their fourth
// byte, and only then compared in full.
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
}

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
		if len(b) == 3 {
			m.triNext[l] = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
		} else {
			m.triNext[l][b[3]>>6] |= 1 << (b[3] & 63)
		}
	}
	return m
}

// find calls fn with the offset and index of every keyword occurrence, in
// non-decreasing offset order (overlapping occurrences included).
func (m *kwMatcher) find(b []byte, fn func(off, kw int)) {
	var h uint32
	for i := 0; i < len(b); i++ {
		h = (h<<8 | uint32(lowerTable[b[i]])) & 0xffffff
		if i < 1 {
			continue
		}
		if i >= 2 {
			if th := triHash(h); m.tri[th>>6]&(1<<(th&63)) != 0 {
				at := i - 2
				l := int(m.triSlot[th]) - 1
				var next byte // the fourth byte; 0 past the end (only three-byte keywords fit)
				if i+1 < len(b) {
					next = lowerTable[b[i+1]]
				}
				var list []int
				if i+1 >= len(b) || m.triNext[l][next>>6]&(1<<(next&63)) != 0 {
					list = m.triKW[l] // else no keyword of the list has this fourth byte
				}
				for _, k := range list {
					kw := m.kws[k]
					if len(kw) > len(b)-at {
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
		}
		if p := h & 0xffff; m.pair[p>>6]&(1<<(p&63)) != 0 {
			for _, k := range m.pairKW[p] {
				fn(i-1, k)
			}
		}
	}
}
