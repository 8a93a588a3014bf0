package forge_test

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

const sha = "8cd3799b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f"

var testForges = append(config.DefaultForges(),
	config.Forge{Host: "ghe.corp:8443", Type: "github", APIURL: "https://ghe.corp:8443/api/v3", TokenEnv: "GHE_TOKEN"},
	config.Forge{Host: "git.corp.example", Type: "gitlab", APIURL: "https://git.corp.example/api/v4", TokenEnv: "CORP_GITLAB_TOKEN"},
)

var parseTests = []struct {
	in                     string
	kind                   forge.Kind
	host                   string // forge host
	owner, repo, gitRef, p string
	url                    string // "" = same as in
	err                    error
}{
	{in: "https://github.com/fullsend-ai/skills/tree/" + sha + "/rust-conventions", kind: forge.Tree, host: "github.com", owner: "fullsend-ai", repo: "skills", gitRef: sha, p: "rust-conventions"},
	{in: "https://github.com/o/r/tree/main/skills/rust/", kind: forge.Tree, host: "github.com", owner: "o", repo: "r", gitRef: "main", p: "skills/rust", url: "https://github.com/o/r/tree/main/skills/rust"},
	{in: "https://github.com/o/r/tree/v1.2.0", kind: forge.Tree, host: "github.com", owner: "o", repo: "r", gitRef: "v1.2.0"},
	{in: "https://github.com/o/.github/tree/main/x", kind: forge.Tree, host: "github.com", owner: "o", repo: ".github", gitRef: "main", p: "x"},
	{in: "https://GitHub.COM:443/o/r/blob/main/a/b.md", kind: forge.Blob, host: "github.com", owner: "o", repo: "r", gitRef: "main", p: "a/b.md", url: "https://github.com/o/r/blob/main/a/b.md"},
	{in: "https://raw.githubusercontent.com/o/r/" + sha + "/harness/code.yaml", kind: forge.Raw, host: "github.com", owner: "o", repo: "r", gitRef: sha, p: "harness/code.yaml"},
	{in: "https://github.com/o/r/tree/main/my%20skill", kind: forge.Tree, host: "github.com", owner: "o", repo: "r", gitRef: "main", p: "my skill"},
	{in: "https://github.com/o/r/tree/main/a/./b/../c", kind: forge.Tree, host: "github.com", owner: "o", repo: "r", gitRef: "main", p: "a/c", url: "https://github.com/o/r/tree/main/a/c"},
	{in: "https://github.com/o/r/tree/feature/x/y", kind: forge.Tree, host: "github.com", owner: "o", repo: "r", gitRef: "feature", p: "x/y"},
	{in: "https://gitlab.com/g/p/-/tree/main/skills", kind: forge.Tree, host: "gitlab.com", owner: "g", repo: "p", gitRef: "main", p: "skills"},
	{in: "https://gitlab.com/g/sub/sub2/p/-/blob/" + sha + "/a.md", kind: forge.Blob, host: "gitlab.com", owner: "g/sub/sub2", repo: "p", gitRef: sha, p: "a.md"},
	{in: "https://gitlab.com/g/p/-/raw/main/a.md", kind: forge.Raw, host: "gitlab.com", owner: "g", repo: "p", gitRef: "main", p: "a.md"},
	{in: "https://gitlab.com/g/p/-/tree/main", kind: forge.Tree, host: "gitlab.com", owner: "g", repo: "p", gitRef: "main"},
	{in: "https://ghe.corp:8443/o/r/tree/main/x", kind: forge.Tree, host: "ghe.corp:8443", owner: "o", repo: "r", gitRef: "main", p: "x"},
	{in: "https://raw.ghe.corp:8443/o/r/main/x/y.md", kind: forge.Raw, host: "ghe.corp:8443", owner: "o", repo: "r", gitRef: "main", p: "x/y.md"},
	{in: "https://git.corp.example/team/p/-/tree/main/x", kind: forge.Tree, host: "git.corp.example", owner: "team", repo: "p", gitRef: "main", p: "x"},

	{in: "https://example.com/skills/x", err: forge.ErrNotForge},
	{in: "https://example.com/skills/x?y=1", err: forge.ErrNotForge},
	{in: "https://ghe.corp/o/r/tree/main/x", err: forge.ErrNotForge},      // port is part of the match
	{in: "https://ghe.corp:9443/o/r/tree/main/x", err: forge.ErrNotForge}, // other port
	{in: "https://github.com.evil.test/o/r/tree/main/x", err: forge.ErrNotForge},
	{in: "https://api.github.com/repos/o/r/contents/x", err: forge.ErrNotForge},
	{in: "https://github.com/o/r", err: forge.ErrBadURL},
	{in: "https://github.com/o/r/tree", err: forge.ErrBadURL},
	{in: "https://github.com/o/r/commits/main", err: forge.ErrBadURL},
	{in: "https://github.com/o/r/blob/main", err: forge.ErrBadURL},
	{in: "https://github.com/o/r/blob/main/", err: forge.ErrBadURL},
	{in: "https://github.com/o/r/tree/ma..in/x", err: forge.ErrBadURL},
	{in: "https://github.com/o/r/tree/-main/x", err: forge.ErrBadURL},
	{in: "https://github.com/o/r/tree/main.lock/x", err: forge.ErrBadURL},
	{in: "https://github.com/o/r/tree/main/a%2Fb", err: forge.ErrBadURL},
	{in: "https://github.com/o/r/tree/main/a%5Cb", err: forge.ErrBadURL},
	{in: "https://github.com/o/r/tree/main/a%00b", err: ref.ErrSyntax}, // control escapes are refused by ref
	{in: "https://github.com/o/r/tree/main/a//b", err: forge.ErrBadURL},
	{in: "https://github.com/o/r/tree/main//", err: forge.ErrBadURL},
	{in: "https://github.com/o/r/tree/main/x//", err: forge.ErrBadURL},
	{in: "https://github.com/o/r/tree/main/x?ref=y", err: forge.ErrBadURL},
	{in: "https://github.com/o%20x/r/tree/main", err: forge.ErrBadURL},
	{in: "https://github.com/o/r/tree/main/../../x", err: forge.ErrBadURL},
	{in: "https://raw.githubusercontent.com/o/r/main", err: forge.ErrBadURL},
	{in: "https://gitlab.com/p/-/tree/main/x", err: forge.ErrBadURL},
	{in: "https://gitlab.com/g/p/-/commits/main", err: forge.ErrBadURL},
	{in: "https://gitlab.com/g/p/tree/main/x", err: forge.ErrBadURL},
	{in: "http://github.com/o/r/tree/main/x", err: ref.ErrScheme},
	{in: "https://u:p@github.com/o/r/tree/main/x", err: ref.ErrUserinfo},
	{in: "https://github.com/o/r/tree/main/%252e%252e", err: ref.ErrDoubleEncoded},
}

func TestParse(t *testing.T) {
	for _, tc := range parseTests {
		t.Run(tc.in, func(t *testing.T) {
			loc, err := forge.Parse(tc.in, testForges)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("got %+v, %v; want %v", loc, err, tc.err)
				}
				var fe *forge.Error
				if !errors.As(err, &fe) || strings.ContainsAny(err.Error(), "\n") {
					t.Errorf("error %q is not a one-line *forge.Error", err)
				}
				if strings.Contains(err.Error(), "u:p@") {
					t.Errorf("error leaks userinfo: %s", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tc.url
			if want == "" {
				want = tc.in
			}
			if loc.Kind != tc.kind || loc.Forge.Host != tc.host || loc.Owner != tc.owner || loc.Repo != tc.repo ||
				loc.Ref != tc.gitRef || loc.Path != tc.p || loc.URL != want {
				t.Errorf("got %v %s %q/%q@%q path %q url %q", loc.Kind, loc.Forge.Host, loc.Owner, loc.Repo, loc.Ref, loc.Path, loc.URL)
			}
		})
	}
}

func TestNotForgeMessage(t *testing.T) {
	_, err := forge.Parse("https://example.com/skills/rust/", testForges)
	for _, s := range []string{"https://example.com/skills/rust/", "skill directories can only come from a configured forge", "forges: in config.yaml"} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("error %v does not mention %q", err, s)
		}
	}
}

func TestIsCommit(t *testing.T) {
	loc, _ := forge.Parse("https://github.com/o/r/tree/"+sha+"/x", testForges)
	loc2, _ := forge.Parse("https://github.com/o/r/tree/main/x", testForges)
	if !loc.AtCommit() || loc2.AtCommit() {
		t.Errorf("AtCommit: %v %v", loc.AtCommit(), loc2.AtCommit())
	}
}

// FuzzParse: a parsed location re-renders to the canonical form of its
// input (modulo a tree's trailing slash and equivalent percent-encoding),
// the rendering is canonical, and it parses back to the same location.
// Errors are always *forge.Error.
func FuzzParse(f *testing.F) {
	for _, tc := range parseTests {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		loc, err := forge.Parse(in, testForges)
		if err != nil {
			var fe *forge.Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) is not a *forge.Error", err, err)
			}
			return
		}
		canon, err := ref.Canonicalize(in)
		if err != nil {
			t.Fatalf("Parse accepted %q that does not canonicalise: %v", in, err)
		}
		if c, err := ref.Canonicalize(loc.URL); err != nil || c != loc.URL {
			t.Fatalf("rendering %q is not canonical (%q, %v)", loc.URL, c, err)
		}
		if loc.Kind == forge.Tree {
			canon = strings.TrimSuffix(canon, "/")
		}
		if canon != loc.URL {
			a, errA := url.PathUnescape(canon)
			b, errB := url.PathUnescape(loc.URL)
			if errA != nil || errB != nil || a != b {
				t.Fatalf("%q rendered as %q", canon, loc.URL)
			}
		}
		again, err := forge.Parse(loc.URL, testForges)
		if err != nil {
			t.Fatalf("rendering %q does not parse: %v", loc.URL, err)
		}
		if !reflect.DeepEqual(again, loc) {
			t.Fatalf("round trip changed %+v into %+v", loc, again)
		}
		if loc.Path != "" && cas.CheckTreePath(loc.Path) != nil {
			t.Fatalf("unsafe path %q accepted", loc.Path)
		}
	})
}

// TestParseCanonical: for a canonical URL, ParseCanonical answers exactly
// what Parse does (it only skips the second canonicalisation), and the
// memoised forge host matching gives the same answer on every call.
func TestParseCanonical(t *testing.T) {
	for range 2 { // the second round runs on the memoised forge hosts
		for _, tc := range parseTests {
			canon, err := ref.Canonicalize(tc.in)
			if err != nil {
				continue
			}
			want, werr := forge.Parse(canon, testForges)
			got, gerr := forge.ParseCanonical(canon, testForges)
			if !reflect.DeepEqual(got, want) || (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
				t.Errorf("ParseCanonical(%q) = %+v, %v; Parse: %+v, %v", canon, got, gerr, want, werr)
			}
			if tc.err != nil && !errors.Is(gerr, tc.err) {
				t.Errorf("ParseCanonical(%q) = %v, want %v", canon, gerr, tc.err)
			}
		}
	}
}
