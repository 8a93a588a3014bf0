package scan

import (
	"fmt"
	"testing"
	"time"
	"unicode/utf8"
)

func TestZZProbe3(t *testing.T) {
	data := corpusMarkdown(t)
	na := 0
	runes := map[rune]int{}
	for i := 0; i < len(data); {
		r, sz := utf8.DecodeRune(data[i:])
		if r >= 0x80 { na++; runes[r]++ }
		i += sz
	}
	fmt.Println("nonascii runes", na, "distinct", len(runes))
	e, _ := sharedSecrets()
	// per rule window stats, replicating the scanner
	type st struct{ n, bytes int; d time.Duration; matched int }
	stats := map[string]*st{}
	for rep := 0; rep < 50; rep++ {
	var cur lineCursor
	cur.b = data
	e.kw.find(data, func(off, k int) {
		ws, we := cur.at(off)
		kwEnd := off + len(e.kw.kws[k])
		for _, ri := range e.kwRules[k] {
			id := e.rules[ri].RuleID
			if stats[id] == nil { stats[id] = &st{} }
			if c := e.check[ri]; c != nil && e.checkKW[ri][e.kw.kws[k]] {
				t0 := time.Now()
				ok := c(data, kwEnd)
				stats[id].d += time.Since(t0)
				if !ok { continue }
			}
			s := stats[id]
			s.n++
			end := min(extendLines(data, we, e.wide[ri]), kwEnd+windowAfter)
			if e.wide[ri] != 0 { end = min(extendLines(data, we, e.wide[ri]), kwEnd+curlReach) }
			s.bytes += end - ws
			t0 := time.Now()
			if e.rules[ri].Regex.Match(data[ws:end]) { s.matched++ }
			s.d += time.Since(t0)
		}
	})
	}
	for id, s := range stats {
		if s.d > 50*20*time.Microsecond || s.n > 20 {
			fmt.Printf("%-30s n=%d bytes=%d matched=%d t=%v\n", id, s.n, s.bytes, s.matched, s.d)
		}
	}
}
