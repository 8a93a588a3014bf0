// Package termsafe is the one rule for untrusted text on a terminal or in
// a CI log: repository file names, YAML keys and values of remote content,
// registry and forge error text, what an agent wrote. Every printer of the
// CLI (error lines, notes and warnings, the run summary, `runs show`,
// progress lines, the validate table, the scan report) passes such text
// through Sanitize, Fprintf or SafeWriter; none re-implements it. It
// depends on the standard library only, so that rule packages (fetch,
// the egress proxy) can use it too. A terminal escape sequence (ESC, CSI,
// OSC, the C1 controls) or a bidi override never reaches the terminal raw.
package termsafe

import (
	"fmt"
	"io"
	"reflect"
	"unicode"
	"unicode/utf8"
)

// cleanRune is the rule for one decoded rune (n its encoded length): the
// rune to write and whether to write anything. Invalid UTF-8 becomes
// U+FFFD, a control character (C0, DEL, C1) a space, a format character
// (bidi overrides and isolates, zero-width characters, tag characters) is
// dropped.
func cleanRune(c rune, n int) (rune, bool) {
	switch {
	case c == utf8.RuneError && n <= 1:
		return utf8.RuneError, true
	case unicode.IsControl(c):
		return ' ', true
	case unicode.Is(unicode.Cf, c):
		return 0, false
	}
	return c, true
}

// Sanitize makes untrusted text safe to show on one line of a terminal or
// a log: invalid UTF-8 becomes U+FFFD, control characters (C0, DEL, C1:
// escape sequences, carriage returns, newlines, tabs) become a space, and
// format characters (bidi overrides and isolates, zero-width characters,
// tag characters) are dropped.
func Sanitize(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	out := make([]byte, 0, len(s))
	for len(s) > 0 {
		c, n := utf8.DecodeRuneInString(s)
		s = s[n:]
		if r, ok := cleanRune(c, n); ok {
			out = utf8.AppendRune(out, r)
		}
	}
	return string(out)
}

// SafeWriter returns a writer that passes text to w under the rule of
// Sanitize, except that newlines and tabs stay: for printers of several
// lines or of tab-separated columns (put it above a tabwriter, so that
// cells are measured clean). A rune split between two writes is held until
// it is complete. It never writes JSON: use it for text meant for people.
func SafeWriter(w io.Writer) io.Writer { return &safeWriter{w: w} }

type safeWriter struct {
	w       io.Writer
	pending []byte // an incomplete UTF-8 sequence at the end of the last write
}

func (s *safeWriter) Write(p []byte) (int, error) {
	buf := p
	if len(s.pending) > 0 {
		buf = append(s.pending, p...)
		s.pending = nil
	}
	out := make([]byte, 0, len(buf))
	for len(buf) > 0 {
		if !utf8.FullRune(buf) {
			s.pending = append([]byte(nil), buf...)
			break
		}
		c, n := utf8.DecodeRune(buf)
		buf = buf[n:]
		if c == '\n' || c == '\t' {
			out = append(out, byte(c))
			continue
		}
		if r, ok := cleanRune(c, n); ok {
			out = utf8.AppendRune(out, r)
		}
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Fprintf is fmt.Fprintf for printers of untrusted values: the format is
// the printer's own (its newlines and tabs stay), every argument of a
// string kind, error or []string passes through Sanitize first, so a value
// can neither carry an escape sequence nor start a line of its own. (A
// fmt.Stringer is formatted as it is: pass untrusted text as a string.)
func Fprintf(w io.Writer, format string, args ...any) (int, error) {
	clean := make([]any, len(args))
	for i, a := range args {
		switch x := a.(type) {
		case string:
			clean[i] = Sanitize(x)
		case error:
			clean[i] = Sanitize(x.Error())
		case []string:
			c := make([]string, len(x))
			for j, s := range x {
				c[j] = Sanitize(s)
			}
			clean[i] = c
		default:
			if v := reflect.ValueOf(a); v.Kind() == reflect.String {
				clean[i] = Sanitize(v.String())
			} else {
				clean[i] = a
			}
		}
	}
	return fmt.Fprintf(w, format, clean...)
}
