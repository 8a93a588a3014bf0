package fetch_test

import (
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/fetch"
)

var redactTests = []struct{ in, want string }{
	{"https://github.com/o/r/tree/main/x", "https://github.com/o/r/tree/main/x"},
	{"https://u:p@host/x", "https://REDACTED@host/x"},
	{"https://tok@host/x", "https://REDACTED@host/x"},
	{"fetch https://a:b@h.test/x: boom", "fetch https://REDACTED@h.test/x: boom"},
	{"https://h/x?ref=main&private_token=abc&per_page=100", "https://h/x?ref=main&private_token=REDACTED&per_page=100"},
	{"https://h/x?X-Amz-Signature=abc&X-Amz-Credential=def", "https://h/x?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED"},
	{"https://h/x?flag", "https://h/x?REDACTED"},
	{"https://h/x#sha256=abc", "https://h/x#sha256=abc"},
	{"https://h/x#access_token=abc", "https://h/x#REDACTED"},
	{"HTTPS://U:P@H/", "HTTPS://REDACTED@H/"},
	{"token ghp_0123456789abcdefghijABCDEF0123 leaked", "token REDACTED leaked"},
	{"github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "REDACTED"},
	{"glpat-abcdefghij0123456789", "REDACTED"},
	{"Authorization: Bearer abc.def.ghi", "Authorization: REDACTED"},
	{"authorization=token12345678", "authorization=REDACTED"},
	{"PRIVATE-TOKEN: xyzzy", "PRIVATE-TOKEN: REDACTED"},
	{"sent Bearer abcdefgh12345", "sent Bearer REDACTED"},
	{"no token was sent; set GITHUB_TOKEN", "no token was sent; set GITHUB_TOKEN"},
	{"plain text, nothing secret: 404 Not Found", "plain text, nothing secret: 404 Not Found"},
}

func TestRedact(t *testing.T) {
	for _, tc := range redactTests {
		got := fetch.Redact(tc.in)
		if got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if again := fetch.Redact(got); again != got {
			t.Errorf("Redact not idempotent on %q: %q", got, again)
		}
	}
}

func FuzzRedact(f *testing.F) {
	for _, tc := range redactTests {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := fetch.Redact(s)
		if fetch.Redact(r) != r {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, r, fetch.Redact(r))
		}
		// Userinfo never survives in an https URL.
		if i := strings.Index(strings.ToLower(r), "https://"); i >= 0 {
			rest := r[i+8:]
			end := strings.IndexAny(rest, "/?# \t\n\"'<>")
			if end < 0 {
				end = len(rest)
			}
			if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 && rest[:at] != "REDACTED" && !strings.HasSuffix(rest[:at], "REDACTED") {
				t.Fatalf("userinfo survived: %q -> %q", s, r)
			}
		}
	})
}
