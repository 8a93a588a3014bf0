package native

import "testing"

// FuzzParseArgs: tool arguments from the model either decode to a non-nil
// object or fail; they never panic.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{`{"path":"a"}`, `{"path": "a"`, `null`, `[]`, ``, `{"a":1} {"b":2}`, `{"n": 1e400}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseArgs(s)
		if err == nil && m == nil {
			t.Fatal("nil object without error")
		}
		if err != nil && m != nil {
			t.Fatal("object with error")
		}
	})
}

// FuzzBound: the bounded text never exceeds the bound when cut and is the
// input when not.
func FuzzBound(f *testing.F) {
	f.Add("héllo wörld", 8)
	f.Add("short", 100)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 200 || max > 1<<16 {
			max = 200 + (max & 0xfff)
		}
		out, cut := bound(s, max, "tool-outputs/1.txt")
		if !cut && out != s {
			t.Fatal("uncut text changed")
		}
		if cut && len(out) > max {
			t.Fatalf("%d > %d", len(out), max)
		}
	})
}
