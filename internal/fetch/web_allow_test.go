package fetch_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
)

// TestWebAllowPortRule: web_fetch applies the sandbox allowlist's port rule
// (netguard.AllowEntry.Admits), not a rule of its own. An entry without a
// port admits 80 and 443 only, so a page on another port of an allowed
// host is refused before anything is dialled; the entry with that port
// admits it.
func TestWebAllowPortRule(t *testing.T) {
	t.Parallel()
	e := newWebEnv(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	get := func(allow ...fetch.WebAllow) error {
		c := fetch.NewWeb(fetch.WebOptions{
			Allow:                  allow,
			AllowedPrivateNetworks: []netip.Prefix{fetchtest.Loopback},
			Resolver:               e.res,
			Timeout:                5 * time.Second,
		})
		_, err := c.Get(context.Background(), e.url("page.test", "/"))
		return err
	}
	wantErr(t, get(fetch.WebAllow{Host: "page.test"}), fetch.ErrDomain, fmt.Sprintf("port %d", e.port))
	wantErr(t, get(fetch.WebAllow{Host: "page.test", Port: e.port + 1}), fetch.ErrDomain)
	wantErr(t, get(fetch.WebAllow{Host: "*.page.test", Port: e.port}), fetch.ErrDomain)
	if e.hits.Load() != 0 {
		t.Fatalf("refused fetches reached the server %d times", e.hits.Load())
	}
	if err := get(fetch.WebAllow{Host: "page.test", Port: e.port}); err != nil {
		t.Fatalf("allowed port: %v", err)
	}
}
