// Package yamlxtest checks, for the tests of the packages that decode YAML
// with yamlx (yamlx itself, config, harness, frontmatter), that bad input
// fails with the error it must give: the sentinel it wraps and the start of
// its one-line message ("file:line: field: reason"). It owns no production
// behaviour.
package yamlxtest

import (
	"errors"
	"strings"
	"testing"
)

// ErrorCase is a bad input In and the error parsing it must give: one
// wrapping Err whose message starts with Want.
type ErrorCase struct {
	Name, In, Want string
	Err            error
}

// CheckErrors parses the input of each case with parse, in a subtest named
// after the case, and fails it unless the error wraps the case's Err and
// its message starts with the case's Want.
func CheckErrors(t *testing.T, cases []ErrorCase, parse func(in []byte) error) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			err := parse([]byte(c.In))
			if !errors.Is(err, c.Err) || !strings.HasPrefix(err.Error(), c.Want) {
				t.Fatalf("err = %v, want %v prefixed %q", err, c.Err, c.Want)
			}
		})
	}
}
