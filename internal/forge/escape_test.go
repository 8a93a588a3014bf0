package forge

import "testing"

// TestEscapes pins the three percent-encodings that build API URLs: a query
// value keeps only unreserved characters and "/", a path keeps
// sub-delimiters as ref.Canonicalize does, a single segment encodes "/".
func TestEscapes(t *testing.T) {
	for _, c := range []struct {
		name string
		fn   func(string) string
		in   string
		want string
	}{
		{"query", queryEscape, "v1.0+rc/a b&c=d~_-é", "v1.0%2Brc/a%20b%26c%3Dd~_-%C3%A9"},
		{"query", queryEscape, "x?y#z%", "x%3Fy%23z%25"},
		{"segments", escapeSegs, "o/r e+!$&'()*,;=:@", "o/r%20e+!$&'()*,;=:@"},
		{"segments", escapeSegs, "a%b?c#d\"é", "a%25b%3Fc%23d%22%C3%A9"},
		{"segment", escapeSeg, "group/sub project+x", "group%2Fsub%20project+x"},
	} {
		if got := c.fn(c.in); got != c.want {
			t.Errorf("%s(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}
