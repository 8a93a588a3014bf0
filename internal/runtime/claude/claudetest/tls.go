package claudetest

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"
)

// NewTLSFunc is NewFunc served over HTTPS (httptest's loopback test
// certificate, valid for 127.0.0.1; CAPEM is it as a root).
func NewTLSFunc(t testing.TB, next func(i int, r *Request) Turn) *Server {
	s := &Server{t: t, next: next, stop: make(chan struct{})}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.handle))
	s.StartTLS()
	t.Cleanup(func() {
		close(s.stop)
		s.CloseClientConnections()
		s.Close()
	})
	return s
}

// CAPEM is the PEM of the certificate an HTTPS server presents, to be
// trusted as a root.
func (s *Server) CAPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}
