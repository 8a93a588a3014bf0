package fetchsvc

import (
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
)

// The allowlist is canonicalised once, in New, and requests are matched
// against those canonical entries (ref.MatchCanonical): entries written in
// any spelling still match exactly what ref.MatchPrefix would, and a
// sibling directory never does.
func TestAllowlistCanonicalisedAtConstruction(t *testing.T) {
	store, err := cas.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{
		Allowed: []string{"HTTPS://GitHub.COM:443/lib/", "https://github.com./o/x/../r/"},
		Store:   store, Scanner: nopScanner{}, Audit: audit.Open(t.TempDir() + "/a"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"https://github.com/lib/", "https://github.com/o/r/"}; strings.Join(s.allow, " ") != strings.Join(want, " ") {
		t.Fatalf("allow = %q; want %q", s.allow, want)
	}
	pin := "#sha256=" + strings.Repeat("a", 64)
	for _, tc := range []struct {
		url  string
		want int
	}{
		{"https://github.com/o/r/tree/main/skills/a" + pin, 1},
		{"https://GITHUB.com:443/lib/tree/main/a" + pin, 0},
		{"https://github.com/o/r/../../lib/tree/main/a" + pin, 0},
		{"https://github.com/o/r-evil/tree/main/a" + pin, -1},
		{"https://github.com/o/r/../x/tree/main/a" + pin, -1},
	} {
		_, _, idx, e := s.check(tc.url)
		switch {
		case tc.want < 0 && (e == nil || e.Code != CodeNotAllowed):
			t.Errorf("%s: got %v, want not_allowed", tc.url, e)
		case tc.want >= 0 && e != nil && e.Code == CodeNotAllowed:
			t.Errorf("%s: refused as not allowed: %v", tc.url, e.Message)
		case tc.want >= 0 && idx != tc.want:
			t.Errorf("%s: allowed by entry %d, want %d", tc.url, idx, tc.want)
		}
	}
}
