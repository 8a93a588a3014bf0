package ref

import (
	"errors"
	"strings"
	"testing"
)

func seedRefs(f *testing.F) {
	for _, tc := range canonTests {
		f.Add(tc.in, "x")
	}
	for _, tc := range resolveTests {
		f.Add(tc.base, tc.rel)
	}
	for _, tc := range parseTests {
		f.Add(tc.in, "../y#sha256="+hexLower)
	}
}

func isRefError(err error) bool {
	var re *Error
	return errors.As(err, &re) && re.Err != nil
}

// FuzzCanonicalize: every error is a *Error; a canonical URL is a fixed
// point, https, free of userinfo, %25, backslash and fragments, and matches
// its own directory prefix.
func FuzzCanonicalize(f *testing.F) {
	seedRefs(f)
	f.Fuzz(func(t *testing.T, s, _ string) {
		c, err := Canonicalize(s)
		if err != nil {
			if !isRefError(err) {
				t.Fatalf("error %T %v is not *ref.Error", err, err)
			}
			if c != "" {
				t.Fatalf("non-empty result %q with error", c)
			}
			return
		}
		again, err := Canonicalize(c)
		if err != nil || again != c {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", s, c, again, err)
		}
		if !strings.HasPrefix(c, "https://") || strings.ContainsAny(c, "\\#") || strings.Contains(hostOf(c), "@") || strings.Contains(c, "%25") {
			t.Fatalf("canonical form %q breaks a rule", c)
		}
		if p, _, _ := strings.Cut(c, "?"); strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") || strings.Contains(p, "/./") || strings.HasSuffix(p, "/.") {
			t.Fatalf("dot segment left in %q", c)
		}
		if i, ok := MatchPrefix(c, []string{"https://" + hostOf(c) + "/"}); !ok || i != 0 {
			t.Fatalf("%q does not match its own origin prefix", c)
		}
	})
}

func hostOf(c string) string {
	rest := c[len("https://"):]
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		return rest[:i]
	}
	return rest
}

// FuzzParse: errors are *Error; URL refs carry canonical URLs; digests are
// lower-case hex; String() round-trips.
func FuzzParse(f *testing.F) {
	seedRefs(f)
	f.Fuzz(func(t *testing.T, s, _ string) {
		r, err := Parse(s)
		if err != nil {
			if !isRefError(err) {
				t.Fatalf("error %T %v is not *ref.Error", err, err)
			}
			if r != (Ref{}) {
				t.Fatalf("non-zero Ref with error: %+v", r)
			}
			return
		}
		if r.Digest != "" {
			if _, err := ParseDigest(string(r.Digest)); err != nil || strings.ToLower(string(r.Digest)) != string(r.Digest) {
				t.Fatalf("bad digest %q", r.Digest)
			}
		}
		switch r.Kind {
		case URL:
			if c, err := Canonicalize(r.URL); err != nil || c != r.URL {
				t.Fatalf("URL %q not canonical (%v)", r.URL, err)
			}
			r2, err := Parse(r.String())
			if err != nil || r2.URL != r.URL || r2.Digest != r.Digest {
				t.Fatalf("round trip %q: %+v %v", r.String(), r2, err)
			}
		case Relative, Absolute:
			if r.Path == "" || r.URL != "" {
				t.Fatalf("local ref %+v", r)
			}
		default:
			t.Fatalf("kind %v", r.Kind)
		}
	})
}

// FuzzResolveRef: errors are *Error; results are canonical URLs; a result
// stays on the base's origin unless the reference was itself an absolute URL.
func FuzzResolveRef(f *testing.F) {
	seedRefs(f)
	f.Fuzz(func(t *testing.T, base, rel string) {
		r, err := ResolveRef(base, rel)
		if err != nil {
			if !isRefError(err) {
				t.Fatalf("error %T %v is not *ref.Error", err, err)
			}
			return
		}
		if r.Kind != URL {
			t.Fatalf("kind %v", r.Kind)
		}
		if c, err := Canonicalize(r.URL); err != nil || c != r.URL {
			t.Fatalf("resolved URL %q not canonical (%v)", r.URL, err)
		}
		if k, _ := Classify(rel); k == Relative {
			b, _ := Parse(base)
			if hostOf(b.URL) != hostOf(r.URL) {
				t.Fatalf("relative %q left origin %q: %q", rel, b.URL, r.URL)
			}
		}
	})
}
