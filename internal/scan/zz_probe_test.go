package scan

import (
	"fmt"
	"sort"
	"testing"
)

func TestZZProbe(t *testing.T) {
	data := corpusMarkdown(t)
	e, _ := sharedSecrets()
	fmt.Println("size", len(data), "secret kws", len(e.kw.kws), "always", e.always)
	cnt := map[string]int{}
	e.kw.find(data, func(off, k int) { cnt[e.kw.kws[k]]++ })
	type kv struct{ k string; n int }
	var l []kv
	tot := 0
	for k, n := range cnt { l = append(l, kv{k, n}); tot += n }
	sort.Slice(l, func(i, j int) bool { return l[i].n > l[j].n })
	fmt.Println("secrets total hits", tot, l[:min(40, len(l))])
	cnt = map[string]int{}
	injAnchors.find(data, func(off, k int) { cnt[injAnchors.kws[k]]++ })
	l = nil; tot = 0
	for k, n := range cnt { l = append(l, kv{k, n}); tot += n }
	sort.Slice(l, func(i, j int) bool { return l[i].n > l[j].n })
	fmt.Println("inj total hits", tot, l[:min(40, len(l))])
	fmt.Println(e.kw.kws)
}
