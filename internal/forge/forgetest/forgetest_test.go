package forgetest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
)

// TestFaultTimesAndLog: a fault hits exactly Times requests, every request
// is logged with its host, and raw files are served on the raw host.
func TestFaultTimesAndLog(t *testing.T) {
	gh := forgetest.NewGitHub(t, forgetest.Repos{"o/r@main": {"a.txt": []byte("A")}})
	gl := forgetest.NewGitLab(t, forgetest.Repos{"g/p@main": {"b.txt": []byte("B")}})
	c := fetch.New(forgetest.Options(gh, gl))
	ctx := context.Background()
	gh.Fail(forgetest.Fault{Path: "/o/r/", Times: 2, Status: 429, Header: http.Header{"Retry-After": {"1"}}})
	for i := 0; i < 2; i++ {
		_, err := c.Get(ctx, gh.RawURL("o/r@main", "a.txt"), nil)
		var se *fetch.StatusError
		if !errors.As(err, &se) || se.StatusCode != 429 || se.Header.Get("Retry-After") != "1" {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	resp, err := c.Get(ctx, gh.RawURL("o/r@main", "a.txt"), nil)
	if err != nil || string(resp.Body) != "A" {
		t.Fatalf("after the fault: %v", err)
	}
	reqs := gh.Requests()
	if len(reqs) != 3 || reqs[2].Host != gh.RawHost() || reqs[2].Path != "/o/r/main/a.txt" {
		t.Errorf("log %+v", reqs)
	}
	if gh.Commit("o/r@main") == "" || gh.Commit("o/r@nope") != "" {
		t.Errorf("Commit")
	}
	resp, err = c.Get(ctx, gl.Forge().APIURL+"/projects/g%2Fp/repository/files/b.txt/raw?ref=main", nil)
	if err != nil || string(resp.Body) != "B" {
		t.Fatalf("gitlab raw: %v", err)
	}
	if gl.RequestCount() != 1 || gh.RequestCount() != 3 {
		t.Errorf("counts %d %d", gl.RequestCount(), gh.RequestCount())
	}
	// Unknown names do not resolve: nothing escapes to real DNS.
	if _, err := gh.Resolver().LookupNetIP(ctx, "ip", "github.com"); err == nil {
		t.Errorf("resolver answered for github.com")
	}
}
