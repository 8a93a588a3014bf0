package fetch_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
)

// TestDialContextVets: DialContext dials a name only at addresses that
// pass the address rules; an internal answer outside
// allowed_private_networks and a metadata address (even with every range
// exempted) are refused before any connection is made.
func TestDialContextVets(t *testing.T) {
	ln, accepted := fetchtest.Sink(t)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	res := fetchtest.NewResolver()
	res.Set("reg.test", fetchtest.LoopbackAddr)
	ctx := context.Background()

	strict := fetch.New(fetch.Options{Resolver: res})
	if _, err := strict.DialContext(ctx, "tcp", "reg.test:"+port); !errors.Is(err, fetch.ErrInternalAddress) {
		t.Fatalf("loopback without allowed_private_networks: %v, want ErrInternalAddress", err)
	}
	if _, err := strict.DialContext(ctx, "tcp", "127.0.0.1:"+port); !errors.Is(err, fetch.ErrInternalAddress) {
		t.Fatalf("loopback literal: %v, want ErrInternalAddress", err)
	}
	all := fetch.New(fetch.Options{Resolver: res, AllowedPrivateNetworks: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}})
	if _, err := all.DialContext(ctx, "tcp", "169.254.169.254:80"); !errors.Is(err, fetch.ErrInternalAddress) {
		t.Fatalf("metadata address: %v, want ErrInternalAddress", err)
	}
	if _, err := all.DialContext(ctx, "udp", "reg.test:"+port); err == nil {
		t.Fatal("udp dial accepted")
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("%d connections reached the listener before any was allowed", n)
	}
	ok := fetch.New(fetch.Options{Resolver: res, AllowedPrivateNetworks: []netip.Prefix{fetchtest.Loopback}})
	c, err := ok.DialContext(ctx, "tcp", "reg.test:"+port)
	if err != nil {
		t.Fatalf("allowed loopback: %v", err)
	}
	c.Close()
	for deadline := time.Now().Add(10 * time.Second); accepted.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the allowed dial never reached the listener")
		}
	}
	if res.Lookups("reg.test") == 0 {
		t.Fatal("the name was never looked up through the resolver")
	}
}
