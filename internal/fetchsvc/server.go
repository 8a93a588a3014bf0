package fetchsvc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/fullsend-ai/fullsend/internal/harness"
)

// testOnlyListenAddr is where Start listens: loopback, dynamic port. Tests
// may point it at a fixed loopback port (never a wildcard address).
var testOnlyListenAddr = "127.0.0.1:0"

// Server is a running Service on a loopback TCP port. A nil *Server (what
// StartIfAllowed returns when runtime fetch is off) is valid: Addr is "",
// Services and SandboxEnv are empty, Attach and Close do nothing.
type Server struct {
	svc    *Service
	ln     net.Listener
	http   *http.Server
	done   chan struct{}
	cancel context.CancelFunc
}

// StartIfAllowed starts the service for h only when h has
// allow_runtime_fetch: true, with h's effective allowed_remote_resources
// and max_runtime_fetches (o.Allowed and o.MaxFetches are overwritten).
// Otherwise it returns (nil, nil) and opens nothing: no port, no token.
func StartIfAllowed(ctx context.Context, h *harness.Materialized, o Options) (*Server, error) {
	if h == nil || !h.AllowRuntimeFetch {
		return nil, nil
	}
	o.Allowed = h.AllowedRemoteResources
	o.MaxFetches = h.EffectiveMaxRuntimeFetches()
	return Start(ctx, o)
}

// Start serves a new Service on 127.0.0.1 with a port chosen by the
// kernel. It serves until Close or until ctx is done.
func Start(ctx context.Context, o Options) (*Server, error) {
	svc, err := New(o)
	if err != nil {
		return nil, err
	}
	// No TCP keep-alive probes: the peer is on this host (its connection
	// ends with the process), and ReadTimeout and IdleTimeout bound idle
	// connections; this saves four setsockopt calls per connection.
	lc := net.ListenConfig{KeepAlive: -1}
	ln, err := lc.Listen(context.Background(), "tcp4", testOnlyListenAddr)
	if err != nil {
		return nil, fmt.Errorf("runtime fetch service: listen: %w", err)
	}
	errLog := io.Discard
	if o.Log != nil {
		errLog = o.Log
	}
	base, cancel := context.WithCancel(context.Background())
	s := &Server{svc: svc, ln: ln, done: make(chan struct{}), cancel: cancel}
	s.http = &http.Server{
		Handler:           svc,
		BaseContext:       func(net.Listener) context.Context { return base },
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          log.New(errLog, "fullsend: runtime fetch service: ", 0),
	}
	go func() {
		defer close(s.done)
		s.http.Serve(ln)
	}()
	if ctx != nil && ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				s.Close()
			case <-s.done:
			}
		}()
	}
	return s, nil
}

// Service is the handler behind the server.
func (s *Server) Service() *Service {
	if s == nil {
		return nil
	}
	return s.svc
}

// Addr is the host-side listening address, "127.0.0.1:PORT".
func (s *Server) Addr() string {
	if s == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Token is the run's bearer token (see Service.Token).
func (s *Server) Token() string {
	if s == nil {
		return ""
	}
	return s.svc.Token()
}

// Services is what the sandbox spec's Network.Services needs so the
// sandbox's egress proxy admits the service.
func (s *Server) Services() []string {
	if s == nil {
		return nil
	}
	return []string{s.Addr()}
}

// SandboxEnv is the environment `fullsend fetch-skill` needs inside the
// sandbox: FULLSEND_FETCH_URL ("http://" + sandboxAddr; "" means Addr(),
// which is right for the local and docker backends, whose egress proxy
// dials runner Services on the host's loopback) and FULLSEND_FETCH_TOKEN.
// Inject it through the environment only, never the command line.
func (s *Server) SandboxEnv(sandboxAddr string) map[string]string {
	if s == nil {
		return nil
	}
	if sandboxAddr == "" {
		sandboxAddr = s.Addr()
	}
	return map[string]string{EnvURL: "http://" + sandboxAddr, EnvToken: s.Token()}
}

// Attach is Service.Attach.
func (s *Server) Attach(u Uploader, reserved []string) {
	if s != nil {
		s.svc.Attach(u, reserved)
	}
}

// Close stops accepting requests, cancels those in flight and waits for
// the server to stop. It is idempotent.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	s.svc.closing.Store(true)
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.http.Close()
	}
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
