package ref

import (
	"errors"
	"strings"
	"testing"
)

const hexLower = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

var hexUpper = strings.ToUpper(hexLower)

var classifyTests = []struct {
	name, in string
	want     Kind
	err      error
}{
	{"empty", "", 0, ErrEmpty},
	{"relative", "agents/code.md", Relative, nil},
	{"relative dot", "./agents/code.md", Relative, nil},
	{"relative parent", "../common/x", Relative, nil},
	{"relative with pin", "../common/x#sha256=" + hexLower, Relative, nil},
	{"env var source", "${GOOGLE_APPLICATION_CREDENTIALS}", Relative, nil},
	{"absolute", "/opt/fullsend/agents/code.md", Absolute, nil},
	{"https", "https://github.com/o/r/a.md", URL, nil},
	{"https upper scheme", "HTTPS://github.com/o/r/a.md", URL, nil},
	{"http", "http://github.com/o/r/a.md", 0, ErrScheme},
	{"file", "file:///etc/passwd", 0, ErrScheme},
	{"ftp", "ftp://example.com/x", 0, ErrScheme},
	{"javascript", "javascript:alert(1)", 0, ErrScheme},
	{"gopher", "gopher://x/", 0, ErrScheme},
	{"data", "data:text/plain,hi", 0, ErrScheme},
	{"scheme relative", "//evil.example/x", 0, ErrScheme},
	{"windows drive", `C:\Windows\x`, 0, ErrBackslash},
	{"backslash relative", `..\..\etc\passwd`, 0, ErrBackslash},
	{"NUL", "agents/a\x00.md", 0, ErrSyntax},
	{"newline", "agents/a\n.md", 0, ErrSyntax},
}

func TestClassify(t *testing.T) {
	t.Parallel()
	for _, tc := range classifyTests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := Classify(tc.in)
			checkErr(t, err, tc.err)
			if k != tc.want {
				t.Fatalf("Classify(%q) = %v, want %v", tc.in, k, tc.want)
			}
		})
	}
}

func checkErr(t *testing.T, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("error = %v, want %v", err, want)
	}
	var re *Error
	if !errors.As(err, &re) {
		t.Fatalf("error %T is not *ref.Error", err)
	}
}

var canonTests = []struct {
	name, in, want string
	err            error
}{
	{"plain", "https://github.com/o/r/a.md", "https://github.com/o/r/a.md", nil},
	{"mixed case host", "https://GitHub.COM/o/R/a.md", "https://github.com/o/R/a.md", nil},
	{"upper scheme", "HTTPS://github.com/x", "https://github.com/x", nil},
	{"default port", "https://github.com:443/x", "https://github.com/x", nil},
	{"default port leading zero", "https://github.com:0443/x", "https://github.com/x", nil},
	{"empty port", "https://github.com:/x", "https://github.com/x", nil},
	{"other port kept", "https://ghe.local:8443/x", "https://ghe.local:8443/x", nil},
	{"port zero", "https://h.example:0/x", "", ErrPort},
	{"port too big", "https://h.example:65536/x", "", ErrPort},
	{"port letters", "https://h.example:44a/x", "", ErrPort},
	{"trailing dot host", "https://github.com./o/", "https://github.com/o/", nil},
	{"two trailing dots", "https://github.com../o/", "", ErrHost},
	{"empty path", "https://github.com", "https://github.com/", nil},
	{"dot segments", "https://h.example/a/./b/../c", "https://h.example/a/c", nil},
	{"trailing dotdot", "https://h.example/a/b/..", "https://h.example/a/", nil},
	{"encoded dots", "https://h.example/a/%2e%2E/c", "https://h.example/c", nil},
	{"dotdot above root", "https://h.example/../etc", "", ErrEscapes},
	{"unreserved decoded", "https://h.example/%61%62%7E", "https://h.example/ab~", nil},
	{"escape upper-cased", "https://h.example/a%2fb", "https://h.example/a%2Fb", nil},
	{"encoded slash distinct", "https://h.example/lib%2Fx", "https://h.example/lib%2Fx", nil},
	{"encoded slash hides dotdot", "https://h.example/lib/x%2F..%2F..%2Fevil", "", ErrDotSegment},
	{"encoded backslash hides dotdot", "https://h.example/lib/%5C..%5Cevil", "", ErrDotSegment},
	{"double encoded slash", "https://h.example/lib%252Fevil", "", ErrDoubleEncoded},
	{"double encoded anywhere", "https://h.example/a?x=%25", "", ErrDoubleEncoded},
	{"bad escape", "https://h.example/a%zz", "", ErrSyntax},
	{"truncated escape", "https://h.example/a%2", "", ErrSyntax},
	{"space", "https://h.example/a b", "", ErrSyntax},
	{"non-ascii", "https://h.example/ä", "", ErrSyntax},
	// Path parameters hiding dot segments (Tomcat reads "..;x" as "..").
	{"dotdot path parameter", "https://h.example/lib/..;/evil", "", ErrDotSegment},
	{"dot path parameter", "https://h.example/lib/.;x/a", "", ErrDotSegment},
	{"encoded semicolon dotdot", "https://h.example/lib/..%3b/evil", "", ErrDotSegment},
	{"encoded dots with parameter", "https://h.example/lib/%2e%2e;jsessionid=1/evil", "", ErrDotSegment},
	{"parameter behind encoded slash", "https://h.example/lib/x%2F..;%2Fevil", "", ErrDotSegment},
	{"semicolon in a name kept", "https://h.example/lib/a;b/c", "https://h.example/lib/a;b/c", nil},
	// Escapes must decode to valid UTF-8 without control characters.
	{"overlong dots", "https://h.example/lib/%C0%AE%C0%AE/evil", "", ErrSyntax},
	{"overlong slash", "https://h.example/lib/..%C0%AF..%C0%AFevil", "", ErrSyntax},
	{"three-byte overlong dot", "https://h.example/lib/%E0%80%AE%E0%80%AE/evil", "", ErrSyntax},
	{"lone continuation byte", "https://h.example/lib/%80", "", ErrSyntax},
	{"encoded surrogate", "https://h.example/lib/%ED%A0%80", "", ErrSyntax},
	{"encoded NUL", "https://h.example/lib/a%00.md", "", ErrSyntax},
	{"encoded CRLF", "https://h.example/lib/a%0D%0AX-Injected:%201", "", ErrSyntax},
	{"encoded DEL", "https://h.example/lib/a%7F", "", ErrSyntax},
	{"encoded NUL in query", "https://h.example/lib/a?x=%00", "", ErrSyntax},
	{"valid UTF-8 escape kept", "https://h.example/%c3%a4", "https://h.example/%C3%A4", nil},
	{"tab in path", "https://h.example/a\tb", "", ErrSyntax},
	{"tab in host", "https://h.exa\tmple/", "", ErrHost},
	{"newline in host", "https://h.example\n/", "", ErrHost},
	{"NUL in host", "https://h.example\x00.evil/", "", ErrHost},
	// Hosts: ASCII only; IDNs in punycode; no look-alike dots.
	{"full-width dot", "https://github\u3002com/x", "", ErrHost},
	{"encoded full-width dot", "https://github%E3%80%82com/x", "", ErrHost},
	{"unicode host", "https://g\u00edthub.com/x", "", ErrHost},
	{"punycode mixed case", "https://XN--Gthub-2ra.COM/x", "https://xn--gthub-2ra.com/x", nil},
	{"encoded zone", "https://[fe80::1%25eth0]/", "", ErrDoubleEncoded},
	{"ipv6 zone on public", "https://[2001:db8::1%en0]/", "", ErrHost},
	{"long label", "https://" + strings.Repeat("a", 64) + ".example/", "", ErrHost},
	{"long host", "https://" + strings.Repeat("a.", 127) + "example/", "", ErrHost},
	{"over MaxURLLength", "https://h.example/" + strings.Repeat("a", MaxURLLength), "", ErrSyntax},
	{"port with sign", "https://h.example:+443/", "", ErrPort},
	{"port two colons", "https://h.example:443:80/", "", ErrPort},
	{"question mark starts query", "https://h.example/lib?/../../evil", "https://h.example/lib?/../../evil", nil},
	{"userinfo", "https://user@github.com/x", "", ErrUserinfo},
	{"userinfo password", "https://u:p@github.com/x", "", ErrUserinfo},
	{"at in host", "https://github.com@evil.example/x", "", ErrUserinfo},
	{"backslash", `https://github.com\@evil.example/x`, "", ErrBackslash},
	{"http", "http://github.com/x", "", ErrScheme},
	{"no authority", "https:github.com/x", "", ErrSyntax},
	{"fragment", "https://github.com/x#y", "", ErrFragment},
	{"empty host", "https:///x", "", ErrHost},
	{"host bad char", "https://git*hub.com/x", "", ErrHost},
	{"encoded host", "https://git%68ub.com/x", "", ErrHost},
	{"ipv6", "https://[2001:DB8::1]/x", "https://[2001:db8::1]/x", nil},
	{"ipv6 long form", "https://[2001:0db8:0:0:0:0:0:1]:443/x", "https://[2001:db8::1]/x", nil},
	{"ipv6 port", "https://[::1]:8443/x", "https://[::1]:8443/x", nil},
	{"ipv6 mapped", "https://[::FFFF:127.0.0.1]/", "https://[::ffff:127.0.0.1]/", nil},
	{"ipv6 zone", "https://[fe80::1%eth0]/", "", ErrHost},
	{"ipv6 unclosed", "https://[::1/x", "", ErrHost},
	{"ipv6 junk after", "https://[::1]x/", "", ErrHost},
	{"ipv4 in brackets", "https://[127.0.0.1]/", "", ErrHost},
	{"ipv4", "https://127.0.0.1/x", "https://127.0.0.1/x", nil},
	{"legacy ipv4 short", "https://127.1/x", "", ErrHost},
	{"legacy ipv4 int", "https://2130706433/x", "", ErrHost},
	{"legacy ipv4 hex", "https://0x7f.0.0.1/x", "", ErrHost},
	{"legacy ipv4 octal", "https://0177.0.0.1/x", "", ErrHost},
	{"query kept", "https://h.example/a?ref=main", "https://h.example/a?ref=main", nil},
	{"empty query dropped", "https://h.example/a?", "https://h.example/a", nil},
	{"query normalised", "https://h.example/a?x=%7e", "https://h.example/a?x=~", nil},
	{"empty", "", "", ErrEmpty},
}

func TestCanonicalize(t *testing.T) {
	t.Parallel()
	for _, tc := range canonTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonicalize(tc.in)
			checkErr(t, err, tc.err)
			if got != tc.want {
				t.Fatalf("Canonicalize(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if err == nil {
				again, err := Canonicalize(got)
				if err != nil || again != got {
					t.Fatalf("not idempotent: %q -> %q, %v", got, again, err)
				}
			}
		})
	}
}

func TestErrorRedactsUserinfo(t *testing.T) {
	t.Parallel()
	_, err := Canonicalize("https://alice:s3cret@github.com/x")
	if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "alice") {
		t.Fatalf("error leaks userinfo: %v", err)
	}
	_, err = Parse("https://alice:s3cret@github.com/x#sha256=" + hexLower)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("Parse error leaks userinfo: %v", err)
	}
	if !strings.HasPrefix(err.Error(), `reference "https://REDACTED@github.com/x`) {
		t.Fatalf("error shape: %v", err)
	}
}

func TestParseDigest(t *testing.T) {
	t.Parallel()
	d, err := ParseDigest(hexUpper)
	if err != nil || string(d) != hexLower {
		t.Fatalf("ParseDigest(upper) = %q, %v", d, err)
	}
	for _, bad := range []string{"", hexLower[:63], hexLower + "0", hexLower[:63] + "g", " " + hexLower[1:]} {
		if _, err := ParseDigest(bad); !errors.Is(err, ErrBadDigest) {
			t.Errorf("ParseDigest(%q) err = %v", bad, err)
		}
	}
	if SHA256([]byte("")) != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatal("SHA256 of empty input")
	}
	var u Digest
	if err := u.UnmarshalText([]byte("xyz")); !errors.Is(err, ErrBadDigest) {
		t.Fatalf("UnmarshalText accepted junk: %v", err)
	}
	if err := u.UnmarshalText([]byte(hexUpper)); err != nil || string(u) != hexLower {
		t.Fatalf("UnmarshalText = %q, %v", u, err)
	}
}

var parseTests = []struct {
	name, in string
	want     Ref
	err      error
}{
	{"url pinned upper", "https://GitHub.com/o/r/a.md#sha256=" + hexUpper,
		Ref{Kind: URL, URL: "https://github.com/o/r/a.md", Digest: Digest(hexLower)}, nil},
	{"url unpinned", "https://github.com/o/r/a.md", Ref{Kind: URL, URL: "https://github.com/o/r/a.md"}, nil},
	{"url short hash", "https://github.com/a#sha256=abc", Ref{}, ErrBadDigest},
	{"url long hash", "https://github.com/a#sha256=" + hexLower + "0", Ref{}, ErrBadDigest},
	{"url non-hex hash", "https://github.com/a#sha256=" + strings.Repeat("z", 64), Ref{}, ErrBadDigest},
	{"url other fragment", "https://github.com/a#readme", Ref{}, ErrFragment},
	{"url sha512", "https://github.com/a#sha512=" + hexLower, Ref{}, ErrFragment},
	{"url two fragments", "https://github.com/a#sha256=" + hexLower + "#x", Ref{}, ErrBadDigest},
	{"url userinfo", "https://u@github.com/a#sha256=" + hexLower, Ref{}, ErrUserinfo},
	{"relative", "agents/a.md", Ref{Kind: Relative, Path: "agents/a.md"}, nil},
	{"relative pinned", "../x#sha256=" + hexUpper, Ref{Kind: Relative, Path: "../x", Digest: Digest(hexLower)}, nil},
	{"relative bad pin", "../x#sha256=12", Ref{}, ErrBadDigest},
	{"relative only pin", "#sha256=" + hexLower, Ref{}, ErrEmpty},
	{"relative hash in name", "notes#1.md", Ref{Kind: Relative, Path: "notes#1.md"}, nil},
	{"absolute", "/opt/a.md", Ref{Kind: Absolute, Path: "/opt/a.md"}, nil},
	{"http", "http://github.com/a", Ref{}, ErrScheme},
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range parseTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			checkErr(t, err, tc.err)
			tc.want.Raw = tc.in
			if err != nil {
				tc.want = Ref{}
			}
			if got != tc.want {
				t.Fatalf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
	r, _ := Parse("https://github.com/a")
	if err := r.RequireDigest(); !errors.Is(err, ErrMissingDigest) {
		t.Fatalf("RequireDigest = %v", err)
	}
}

var resolveTests = []struct {
	name, base, rel, want string
	err                   error
}{
	{"sibling file", "https://github.com/o/harnesses/code.yaml", "agents/code.md", "https://github.com/o/harnesses/agents/code.md", nil},
	{"parent", "https://github.com/fullsend-ai/harnesses/code.yaml", "../policies/code-policy.yaml", "https://github.com/fullsend-ai/policies/code-policy.yaml", nil},
	{"skill dir with slash", "https://github.com/o/s/tree/abc/skills/rust/", "../common/x", "https://github.com/o/s/tree/abc/skills/common/x", nil},
	{"skill dir bare name", "https://github.com/o/s/tree/abc/skills/rust/", "x", "https://github.com/o/s/tree/abc/skills/rust/x", nil},
	{"seed traversal", "https://github.com/fullsend-ai/library/skills/rust/SKILL.md", "../../../../attacker-org/evil-repo/policy.yaml", "https://github.com/attacker-org/evil-repo/policy.yaml", nil},
	{"above root", "https://github.com/o/a.md", "../../../x", "", ErrEscapes},
	{"absolute url", "https://github.com/o/a.md", "https://GitLab.com/x/y", "https://gitlab.com/x/y", nil},
	{"absolute url http", "https://github.com/o/a.md", "http://gitlab.com/x/y", "", ErrScheme},
	{"scheme relative", "https://github.com/o/a.md", "//evil.example/x", "", ErrScheme},
	{"local absolute", "https://github.com/o/a.md", "/etc/passwd", "", ErrLocalInRemote},
	{"query", "https://h.example/a/b?x=1", "c?y=2", "https://h.example/a/c?y=2", nil},
	{"empty path keeps query", "https://h.example/a/b?x=1", "?y=2", "https://h.example/a/b?y=2", nil},
	{"encoded dots", "https://h.example/a/b/c", "%2e%2e/d", "https://h.example/a/d", nil},
	{"double encoded", "https://h.example/a/b", "x%252F..", "", ErrDoubleEncoded},
	{"other fragment", "https://h.example/a/b", "x#frag", "", ErrFragment},
	{"backslash", "https://h.example/a/b", `..\x`, "", ErrBackslash},
	{"empty", "https://h.example/a/b", "", "", ErrEmpty},
	{"base with pin", "https://h.example/a/b#sha256=" + hexLower, "c", "https://h.example/a/c", nil},
	{"base http", "http://h.example/a/b", "c", "", ErrScheme},
}

func TestResolveRef(t *testing.T) {
	t.Parallel()
	for _, tc := range resolveTests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ResolveRef(tc.base, tc.rel)
			checkErr(t, err, tc.err)
			if got.URL != tc.want {
				t.Fatalf("ResolveRef(%q, %q) = %q, want %q", tc.base, tc.rel, got.URL, tc.want)
			}
			if err == nil && got.Kind != URL {
				t.Fatalf("kind = %v", got.Kind)
			}
		})
	}
	r, err := ResolveRef("https://h.example/s/rust/", "../dep#sha256="+hexUpper)
	if err != nil || r.Digest != Digest(hexLower) || r.URL != "https://h.example/s/dep" {
		t.Fatalf("pinned relative: %+v, %v", r, err)
	}
}

func TestSeedTraversalRejectedByPrefix(t *testing.T) {
	t.Parallel()
	r, err := ResolveRef("https://github.com/fullsend-ai/library/skills/rust/SKILL.md", "../../../../attacker-org/evil-repo/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckAllowed(r, []string{"https://github.com/fullsend-ai/library/"}); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("traversal out of the prefix allowed: %v", err)
	}
}

var prefixCheckTests = []struct {
	name, in string
	err      error
}{
	{"ok", "https://github.com/fullsend-ai/library/", nil},
	{"host only", "https://github.com/", nil},
	{"no trailing slash", "https://github.com/fullsend-ai/library", ErrPrefix},
	{"host no slash", "https://github.com", ErrPrefix},
	{"http", "http://github.com/o/", ErrScheme},
	{"query", "https://github.com/o/?x=/", ErrPrefix},
	{"fragment", "https://github.com/o/#/", ErrPrefix},
	{"userinfo", "https://u@github.com/o/", ErrUserinfo},
	{"empty", "", ErrEmpty},
	{"double encoded", "https://github.com/o%252F/", ErrDoubleEncoded},
}

func TestCheckPrefix(t *testing.T) {
	t.Parallel()
	for _, tc := range prefixCheckTests {
		t.Run(tc.name, func(t *testing.T) {
			checkErr(t, CheckPrefix(tc.in), tc.err)
		})
	}
}

var matchTests = []struct {
	name, url string
	prefixes  []string
	want      int
}{
	{"match", "https://github.com/fullsend-ai/library/agents/a.md", []string{"https://github.com/fullsend-ai/library/"}, 0},
	{"prefix confusion", "https://github.com/fullsend-ai/library-evil/a.md", []string{"https://github.com/fullsend-ai/library/"}, -1},
	{"traversal out", "https://github.com/fullsend-ai/library/../evil/a.md", []string{"https://github.com/fullsend-ai/library/"}, -1},
	{"encoded traversal out", "https://github.com/fullsend-ai/library/%2E%2E/evil/a.md", []string{"https://github.com/fullsend-ai/library/"}, -1},
	{"traversal inside", "https://github.com/fullsend-ai/library/x/../a.md", []string{"https://github.com/fullsend-ai/library/"}, 0},
	{"double encoded slash", "https://github.com/fullsend-ai/library%252Fevil/a.md", []string{"https://github.com/fullsend-ai/library/"}, -1},
	{"encoded slash not a separator", "https://github.com/fullsend-ai/library%2Fx", []string{"https://github.com/fullsend-ai/library/"}, -1},
	{"userinfo", "https://github.com@evil.example/fullsend-ai/library/a", []string{"https://github.com/"}, -1},
	{"http", "http://github.com/fullsend-ai/library/a", []string{"https://github.com/fullsend-ai/library/"}, -1},
	{"mixed case host", "https://GITHUB.com/fullsend-ai/library/a", []string{"https://github.com/fullsend-ai/library/"}, 0},
	{"mixed case prefix", "https://github.com/fullsend-ai/library/a", []string{"https://GitHub.com/fullsend-ai/library/"}, 0},
	{"path case matters", "https://github.com/Fullsend-AI/library/a", []string{"https://github.com/fullsend-ai/library/"}, -1},
	{"default port", "https://github.com:443/fullsend-ai/library/a", []string{"https://github.com/fullsend-ai/library/"}, 0},
	{"other port", "https://github.com:8443/fullsend-ai/library/a", []string{"https://github.com/fullsend-ai/library/"}, -1},
	{"trailing dot host", "https://github.com./fullsend-ai/library/a", []string{"https://github.com/fullsend-ai/library/"}, 0},
	{"host suffix confusion", "https://github.com.evil.example/fullsend-ai/library/a", []string{"https://github.com/"}, -1},
	{"ipv6 literal", "https://[2001:DB8:0::1]/lib/a", []string{"https://[2001:db8::1]/lib/"}, 0},
	{"ipv6 other", "https://[2001:db8::2]/lib/a", []string{"https://[2001:db8::1]/lib/"}, -1},
	{"invalid prefix skipped", "https://github.com/o/a", []string{"https://github.com/o", "https://github.com/o/"}, 1},
	{"second entry", "https://gitlab.com/o/a", []string{"https://github.com/", "https://gitlab.com/"}, 1},
	{"fragment url", "https://github.com/o/a#x", []string{"https://github.com/"}, -1},
	{"query is not a path segment", "https://h.example/lib?/x", []string{"https://h.example/lib/"}, -1},
	{"sibling with prefix name", "https://h.example/lib-evil/x", []string{"https://h.example/lib/"}, -1},
	{"encoded slash is not a segment", "https://h.example/lib%2Fx", []string{"https://h.example/lib/"}, -1},
	{"dotdot parameter", "https://h.example/lib/..;/evil/x", []string{"https://h.example/lib/"}, -1},
	{"port differs", "https://h.example:8443/lib/x", []string{"https://h.example/lib/"}, -1},
	{"default port equal", "https://h.example:0443/lib/x", []string{"https://H.example./lib/"}, 0},
}

func TestMatchPrefix(t *testing.T) {
	t.Parallel()
	for _, tc := range matchTests {
		t.Run(tc.name, func(t *testing.T) {
			i, ok := MatchPrefix(tc.url, tc.prefixes)
			if i != tc.want || ok != (tc.want >= 0) {
				t.Fatalf("MatchPrefix(%q) = %d, %v; want %d", tc.url, i, ok, tc.want)
			}
		})
	}
}

// TestMatchCanonical: with the URL and the entries canonicalised once
// beforehand (as a service does at construction), MatchCanonical gives
// MatchPrefix's answer on every matchTests case.
func TestMatchCanonical(t *testing.T) {
	t.Parallel()
	for _, tc := range matchTests {
		t.Run(tc.name, func(t *testing.T) {
			var canon []string
			var orig []int
			for i, p := range tc.prefixes {
				if c, err := CanonicalPrefix(p); err == nil {
					canon = append(canon, c)
					orig = append(orig, i)
				}
			}
			got := -1
			if c, err := Canonicalize(tc.url); err == nil {
				if i, ok := MatchCanonical(c, canon); ok {
					got = orig[i]
				}
			}
			if got != tc.want {
				t.Fatalf("MatchCanonical(%q) = %d; want %d", tc.url, got, tc.want)
			}
		})
	}
	if _, ok := MatchCanonical("https://h.example/lib-evil/x", []string{"https://h.example/lib/"}); ok {
		t.Fatal("MatchCanonical matched a sibling directory")
	}
}

func TestCheckSubset(t *testing.T) {
	t.Parallel()
	org := []string{"https://github.com/fullsend-ai/", "https://raw.githubusercontent.com/fullsend-ai/agents/"}
	ok := [][]string{
		nil,
		{"https://github.com/fullsend-ai/"},
		{"https://github.com/fullsend-ai/library/"},
		{"https://GitHub.com:443/fullsend-ai/library/"},
		{"https://raw.githubusercontent.com/fullsend-ai/agents/main/"},
	}
	for _, c := range ok {
		if err := CheckSubset(c, org); err != nil {
			t.Errorf("CheckSubset(%v) = %v", c, err)
		}
	}
	bad := []struct {
		child []string
		err   error
	}{
		{[]string{"https://github.com/"}, ErrNotAllowed},
		{[]string{"https://github.com/fullsend-ai-evil/"}, ErrNotAllowed},
		{[]string{"https://github.com/fullsend-ai/../evil/"}, ErrNotAllowed},
		{[]string{"https://github.com/fullsend-ai/x"}, ErrPrefix},
		{[]string{"http://github.com/fullsend-ai/x/"}, ErrScheme},
		{[]string{"https://raw.githubusercontent.com/fullsend-ai/fullsend/"}, ErrNotAllowed},
	}
	for _, b := range bad {
		checkErr(t, CheckSubset(b.child, org), b.err)
	}
	if err := CheckSubset([]string{"https://github.com/o/"}, nil); !errors.Is(err, ErrNotAllowed) {
		t.Fatalf("empty parent allowed a child: %v", err)
	}
}

func TestCleanLocal(t *testing.T) {
	t.Parallel()
	good := map[string]string{"a/b": "a/b", "./a//b/": "a/b", "a/../b": "b", ".": "."}
	for in, want := range good {
		got, err := CleanLocal(in)
		if err != nil || got != want {
			t.Errorf("CleanLocal(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"..", "../x", "a/../../x", "a/b/../../../etc/shadow"} {
		if _, err := CleanLocal(in); !errors.Is(err, ErrEscapes) {
			t.Errorf("CleanLocal(%q) err = %v, want ErrEscapes", in, err)
		}
	}
	if _, err := CleanLocal("/etc/passwd"); err == nil {
		t.Error("CleanLocal accepted an absolute path")
	}
}

func TestDirURL(t *testing.T) {
	t.Parallel()
	got, err := DirURL("https://github.com/o/r/tree/abc/skills/rust")
	if err != nil || got != "https://github.com/o/r/tree/abc/skills/rust/" {
		t.Fatalf("DirURL = %q, %v", got, err)
	}
	got, _ = DirURL(got)
	if got != "https://github.com/o/r/tree/abc/skills/rust/" {
		t.Fatalf("DirURL not idempotent: %q", got)
	}
}

func TestRefString(t *testing.T) {
	t.Parallel()
	r, err := Parse("https://GitHub.com/a#sha256=" + hexUpper)
	if err != nil {
		t.Fatal(err)
	}
	if r.String() != "https://github.com/a#sha256="+hexLower {
		t.Fatalf("String = %q", r.String())
	}
	r2, err := Parse(r.String())
	if err != nil || r2.URL != r.URL || r2.Digest != r.Digest {
		t.Fatalf("round trip: %+v %v", r2, err)
	}
}

func TestHostname(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://github.com/o/r":            "github.com",
		"https://github.com:8443/o":         "github.com",
		"https://[2001:db8::1]:443/x":       "2001:db8::1",
		"https://[2001:db8::1]/x":           "2001:db8::1",
		"https://h.example?q=1":             "h.example",
		"https://h.example#sha256=ab":       "h.example",
		"http://github.com/o":               "",
		"github.com/o":                      "",
		"https://[2001:db8::1/unterminated": "",
	} {
		if got := Hostname(in); got != want {
			t.Errorf("Hostname(%q) = %q, want %q", in, got, want)
		}
	}
}
