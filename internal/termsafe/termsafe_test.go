package termsafe

import (
	"bytes"
	"errors"
	"testing"
)

type name string

// SafeWriter keeps newlines and tabs, cleans the rest like Sanitize, and
// holds a rune split between writes until it is whole.
func TestSafeWriter(t *testing.T) {
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
	var b bytes.Buffer
	Fprintf(&b, "%s|%s|%v|%v|%d\n", "a\nb", name("c\x1bd"), errors.New("e\rf"), []string{"g\u202eh"}, 7)
	if got, want := b.String(), "a b|c d|e f|[gh]|7\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
