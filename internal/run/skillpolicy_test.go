package run

import (
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// TestIntersectEntry: the intersection of two allowlist entries admits
// exactly what both admit.
func TestIntersectEntry(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"api.example.com:443", "api.example.com:443", "api.example.com:443"},
		{"api.example.com", "api.example.com:443", "api.example.com:443"},
		{"api.example.com:443", "api.example.com", "api.example.com:443"},
		{"api.example.com", "api.example.com:8080", ""},
		{"api.example.com:443", "api.example.com:80", ""},
		{"*.example.com:443", "api.example.com:443", "api.example.com:443"},
		{"api.example.com:443", "*.example.com", "api.example.com:443"},
		{"*.example.com", "*.a.example.com:443", "*.a.example.com:443"},
		{"*.a.example.com", "*.example.com", "*.a.example.com"},
		{"*.example.com", "example.com", ""},
		{"*.example.com", "*.other.com", ""},
		{"api.example.com", "evil.example", ""},
		{"[::1]:8080", "[::1]:8080", "[::1]:8080"},
		{"10.0.0.1:443", "10.0.0.2:443", ""},
	} {
		a, err := sandbox.ParseAllow(c.a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := sandbox.ParseAllow(c.b)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := intersectEntry(a, b)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s ∩ %s = %q %v, want %q", c.a, c.b, got, ok, c.want)
		}
	}
}

// TestIntersectAllow: a skill's wish outside the harness allowlist is
// refused, never added.
func TestIntersectAllow(t *testing.T) {
	kept, refused := intersectAllow([]string{"*.example.com:443", "github.com:443"}, []string{"api.example.com:443", "evil.example:443", "github.com"})
	if got := join(kept); got != "api.example.com:443 github.com:443" {
		t.Errorf("kept = %q", got)
	}
	if got := join(refused); got != "evil.example:443" {
		t.Errorf("refused = %q", got)
	}
	if kept, _ := intersectAllow(nil, []string{"api.example.com:443"}); len(kept) != 0 {
		t.Errorf("no harness egress, kept %v", kept)
	}
}

func join(l []string) string {
	s := ""
	for i, x := range l {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s
}
