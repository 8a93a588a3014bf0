package fetchsvc

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// freePort returns a loopback address nobody listens on right now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := l.Addr().String()
	l.Close()
	return a
}

// Seed 001: "allow_runtime_fetch: false blocks all runtime fetches" — no
// service is started at all: nothing listens on the port it would use,
// there is no token and no sandbox environment to inject.
func TestNotAllowedStartsNothing(t *testing.T) {
	store, err := cas.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Store: store, Scanner: nopScanner{}, Audit: audit.Open(t.TempDir() + "/audit.jsonl")}
	parse := func(y string) *harness.Materialized {
		h, err := harness.Parse("h.yaml", []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		return harness.Materialize(h) // no reference is read here
	}
	base := "agent: a.md\nallowed_remote_resources: [\"https://github.com/o/\"]\n"
	addr := freePort(t)
	old := testOnlyListenAddr
	testOnlyListenAddr = addr
	t.Cleanup(func() { testOnlyListenAddr = old })

	for name, h := range map[string]*harness.Materialized{
		"false": parse(base + "allow_runtime_fetch: false\n"),
		"unset": parse(base),
		"nil":   nil,
	} {
		t.Run(name, func(t *testing.T) {
			s, err := StartIfAllowed(context.Background(), h, o)
			if err != nil || s != nil {
				t.Fatalf("StartIfAllowed = %v, %v; want nil, nil", s, err)
			}
			_, err = net.Dial("tcp4", addr)
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Fatalf("dial %s: %v, want connection refused", addr, err)
			}
			// The nil server is inert: nothing to inject, nothing to close.
			if s.Addr() != "" || s.Token() != "" || s.SandboxEnv("") != nil || s.Services() != nil || s.Close() != nil || s.Service() != nil {
				t.Error("nil server is not inert")
			}
			s.Attach(nil, nil)
		})
	}

	// The control: allowed, the same port answers.
	s, err := StartIfAllowed(context.Background(), parse(base+"allow_runtime_fetch: true\nmax_runtime_fetches: 3\n"), o)
	if err != nil || s == nil {
		t.Fatalf("allowed: %v %v", s, err)
	}
	defer s.Close()
	if s.Addr() != addr || s.Service().Max() != 3 {
		t.Fatalf("addr %s max %d", s.Addr(), s.Service().Max())
	}
	c, err := net.Dial("tcp4", addr)
	if err != nil {
		t.Fatalf("allowed service not listening: %v", err)
	}
	c.Close()
}

// The context given to Start bounds the server's life.
func TestStartContextStops(t *testing.T) {
	store, err := cas.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, Options{Allowed: []string{"https://github.com/o/"}, Store: store, Scanner: nopScanner{}, Audit: audit.Open(t.TempDir() + "/a")})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	<-s.done
	if c, err := net.Dial("tcp4", s.Addr()); err == nil {
		c.Close()
		t.Fatal("still listening after the context ended")
	}
}

type nopScanner struct{}

func (nopScanner) ScanFiles(context.Context, map[string][]byte, scan.Meta) (*scan.Result, error) {
	return &scan.Result{}, nil
}
