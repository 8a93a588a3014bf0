package egress_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox/egress"
	"github.com/fullsend-ai/fullsend/internal/secrets"
)

// BenchmarkSecretsProxy measures the latency the secrets broker adds to a
// request on loopback: the same HTTPS request with a placeholder header
// and a 1 KiB body, once straight to the server and once through the
// proxy (terminated, swapped, re-encrypted), both over kept-alive
// connections after the first handshake. It reports the medians and
// their difference (added-p50-ms; the target is at most 2 ms).
func BenchmarkSecretsProxy(b *testing.B) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	br, err := secrets.New([]secrets.Secret{{Name: "ANTHROPIC_API_KEY", Value: "sk-ant-real", Hosts: []string{hostOf(srv)}}}, secrets.Options{Roots: pool})
	if err != nil {
		b.Fatal(err)
	}
	p, err := egress.New(egress.Config{Services: []string{hostOf(srv)}, Secrets: br})
	if err != nil {
		b.Fatal(err)
	}
	proxy := serveBench(b, p)
	sandboxPool := x509.NewCertPool()
	sandboxPool.AppendCertsFromPEM(br.CA().PEM())
	direct := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	viaProxy := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy), TLSClientConfig: &tls.Config{RootCAs: sandboxPool}}}
	ph := br.Env()["ANTHROPIC_API_KEY"]
	body := strings.Repeat("x", 1024)
	one := func(c *http.Client) time.Duration {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/messages", strings.NewReader(body))
		req.Header.Set("X-Api-Key", ph)
		start := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
		return time.Since(start)
	}
	one(direct) // first handshakes
	one(viaProxy)
	var d, v []time.Duration
	b.ResetTimer()
	for range b.N {
		d = append(d, one(direct))
		v = append(v, one(viaProxy))
	}
	b.StopTimer()
	med := func(x []time.Duration) float64 {
		slices.Sort(x)
		return float64(x[len(x)/2]) / float64(time.Millisecond)
	}
	md, mv := med(d), med(v)
	b.ReportMetric(md, "direct-p50-ms")
	b.ReportMetric(mv, "proxy-p50-ms")
	b.ReportMetric(mv-md, "added-p50-ms")
}

func serveBench(b *testing.B, p *egress.Proxy) *url.URL {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go p.Serve(ln)
	b.Cleanup(func() { p.Close() })
	return &url.URL{Scheme: "http", Host: ln.Addr().String()}
}
