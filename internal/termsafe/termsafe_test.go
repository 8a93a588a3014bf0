package termsafe

import (
	"bytes"
	"errors"
	"testing"
	"unicode"
	"unicode/utf8"
)

type name string

// SafeWriter keeps newlines and tabs, cleans the rest like Sanitize, and
// holds a rune split between writes until it is whole.
func TestSafeWriter(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	w := SafeWriter(&b)
	in := []byte("a\tb\n\x1b[31mé\u202e\u009bz\xff\n")
	for i := range in { // one byte per write: every rune is split
		if n, err := w.Write(in[i : i+1]); n != 1 || err != nil {
			t.Fatalf("write %d: %d %v", i, n, err)
		}
	}
	if got, want := b.String(), "a\tb\n [31mé z\uFFFD\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// Fprintf sanitizes string-kind, error and []string arguments, not the
// format: a value cannot start a line.
func TestFprintf(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	Fprintf(&b, "%s|%s|%v|%v|%d\n", "a\nb", name("c\x1bd"), errors.New("e\rf"), []string{"g\u202eh"}, 7)
	if got, want := b.String(), "a b|c d|e f|[gh]|7\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// FuzzTerminalSafe: whatever the input, Sanitize's output is valid UTF-8
// without control or format characters, and SafeWriter's (fed in two
// writes split anywhere) has none but newline and tab.
func FuzzTerminalSafe(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]0;t\x07\x1b[2J", "\u009b31m\u202e\u200b\r\n\t", "\xff\xfe\xc3", "é\U0001F600\U000E0041"} {
		f.Add(s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, s string, cut uint8) {
		check := func(out string, keep bool) {
			if !utf8.ValidString(out) {
				t.Fatalf("invalid UTF-8 from %q: %q", s, out)
			}
			for _, r := range out {
				if keep && (r == '\n' || r == '\t') {
					continue
				}
				if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
					t.Fatalf("%U left in %q (from %q)", r, out, s)
				}
			}
		}
		check(Sanitize(s), false)
		var b bytes.Buffer
		w := SafeWriter(&b)
		i := int(cut) % (len(s) + 1)
		w.Write([]byte(s[:i]))
		w.Write([]byte(s[i:]))
		check(b.String(), true)
	})
}
