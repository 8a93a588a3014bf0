package run

import (
	"slices"
	"testing"
)

// TestExpandVars: only ${NAME} with a valid environment variable name is
// expanded; other shell syntax is left as written, and unset names come
// back sorted, once each.
func TestExpandVars(t *testing.T) {
	env := map[string]string{"HOME": "/h", "_X1": "x"}
	getenv := func(k string) string { return env[k] }
	for _, c := range []struct {
		in, want string
		missing  []string
	}{
		{"no vars", "no vars", nil},
		{"${HOME}/a ${_X1}", "/h/a x", nil},
		{"$HOME $(id) $ ${", "$HOME $(id) $ ${", nil},
		{"${1A} ${A-B} ${} ${a.b} ${HOME", "${1A} ${A-B} ${} ${a.b} ${HOME", nil},
		{"${ZZ}${AA}${ZZ}", "", []string{"AA", "ZZ"}},
	} {
		got, missing := expandVars(c.in, getenv)
		if got != c.want || !slices.Equal(missing, c.missing) {
			t.Errorf("expandVars(%q) = %q, %q; want %q, %q", c.in, got, missing, c.want, c.missing)
		}
	}
}
