package scan

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"
)

// TestCurlFlagMatchesRegexp: the candidate-driven curl flag search finds
// the same first and last match ends as the plain expressions.
func TestCurlFlagMatchesRegexp(t *testing.T) {
	plain := map[*curlFlag]*regexp.Regexp{
		curlHeaderFlag: regexp.MustCompile(strings.TrimPrefix(curlHeaderFlag.re.String(), "^")),
		curlUserFlag:   regexp.MustCompile(strings.TrimPrefix(curlUserFlag.re.String(), "^")),
	}
	frags := []string{"curl", " ", "\t", "\n", "\r\n", "-H", "-u", "--header", "--user", "--", "-", "=", "\"", "'",
		"Authorization:", "X-Api-Key:", "x-foo-token:", "token:", "user:pw", "$TOKEN", "@", "a", "\\\n"}
	rng := rand.New(rand.NewSource(4))
	n := 0
	for i := 0; i < 40000; i++ {
		var sb strings.Builder
		sb.WriteString("curl")
		for j := rng.Intn(14); j >= 0; j-- {
			sb.WriteString(frags[rng.Intn(len(frags))])
		}
		b := []byte(sb.String())
		for f, re := range plain {
			r := b[4:curlEnd(b, 4)]
			wantFirst, wantLast := -1, -1
			if loc := re.FindIndex(r); loc != nil {
				wantFirst = 4 + loc[1]
				n++
			}
			if locs := re.FindAllIndex(r, -1); locs != nil {
				wantLast = 4 + locs[len(locs)-1][1]
			}
			if got := findAfter(b, 4, f); got != wantFirst {
				t.Fatalf("%q %s: first %d, want %d", b, re, got, wantFirst)
			}
			if got := lastAfter(b, 4, f); got != wantLast {
				t.Fatalf("%q %s: last %d, want %d", b, re, got, wantLast)
			}
		}
	}
	if n < 1000 {
		t.Fatalf("only %d matching samples", n)
	}
}
