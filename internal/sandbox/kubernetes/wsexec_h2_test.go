package kubernetes

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// TestExecAgainstHTTP2Server: a real API server speaks HTTP/2 and picks
// "h2" when a client offers it in ALPN. The exec upgrade is an HTTP/1.1
// request, so the exec dialer must not offer h2 even after the REST
// transport (ForceAttemptHTTP2) has used the same cluster TLS settings.
func TestExecAgainstHTTP2Server(t *testing.T) {
	up := websocket.Upgrader{Subprotocols: []string{execProtocol}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/exec") {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[]},"status":{"phase":"Running"}}`))
			return
		}
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		c.WriteMessage(websocket.BinaryMessage, append([]byte{chanStdout}, "hi\n"...))
		c.WriteMessage(websocket.BinaryMessage, append([]byte{chanError}, `{"status":"Success"}`...))
		c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	c := &Cluster{Server: srv.URL, TLS: &tls.Config{RootCAs: pool}}
	cs, err := NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	ex := NewExecutor(c)
	ctx := context.Background()
	p, err := cs.GetPod(ctx, "ns", "p")
	if err != nil || p.Status.Phase != PodRunning {
		t.Fatalf("REST over HTTP/2: %+v %v", p, err)
	}
	var out bytes.Buffer
	if err := ex(ctx, "ns", "p", []string{"echo", "hi"}, nil, &out, &out); err != nil || out.String() != "hi\n" {
		t.Fatalf("exec against an HTTP/2 server: %q %v", out.String(), err)
	}
	if len(c.TLS.NextProtos) != 0 {
		t.Errorf("the caller's TLS config was changed: NextProtos %q", c.TLS.NextProtos)
	}
}
