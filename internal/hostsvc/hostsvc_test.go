package hostsvc

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
	"github.com/fullsend-ai/fullsend/internal/sandbox/egress"
)

// proxyFor serves an egress proxy admitting services on loopback.
func proxyFor(t *testing.T, services ...string) string {
	t.Helper()
	p, err := egress.New(egress.Config{Services: services})
	if err != nil {
		t.Fatal(err)
	}
	return fetchtest.Serve(t, p)
}

// TestForwardThroughProxy: a client of the forwarder reaches the service
// through the proxy when the proxy admits it, and gets the proxy's refusal
// (naming sandbox.host_services) when it does not. The forwarder listens
// on 127.0.0.2 here because the host's 127.0.0.1:PORT is the service
// itself; in a sandbox it listens on the service's own address.
func TestForwardThroughProxy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "gateway says hi to "+r.URL.Path)
	}))
	defer srv.Close()
	svc := srv.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(svc)

	for _, c := range []struct {
		name     string
		admitted []string
		want     string
	}{
		{"admitted", []string{svc}, "gateway says hi to /v1/messages"},
		{"refused", nil, "sandbox.host_services"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := listen([][2]string{{"127.0.0.2:0", svc}}, proxyFor(t, c.admitted...))
			if err != nil {
				t.Skipf("no 127.0.0.2 on this host: %v", err)
			}
			go f.Serve()
			defer f.Close()
			local := f.Addrs()[0]
			resp, err := http.Get("http://" + local + "/v1/messages")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(b), c.want) {
				t.Errorf("through the forwarder (port %s): %d %q, want %q", port, resp.StatusCode, b, c.want)
			}
		})
	}
}

func TestProxyAddrAndList(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if a, err := ProxyAddr(env(map[string]string{"http_proxy": "http://127.0.0.1:3128"})); err != nil || a != "127.0.0.1:3128" {
		t.Errorf("ProxyAddr = %q, %v", a, err)
	}
	for _, bad := range []string{"", "http://proxy.example.com:3128", "https://127.0.0.1:3128", "http://u:p@127.0.0.1:1"} {
		if _, err := ProxyAddr(env(map[string]string{"HTTP_PROXY": bad})); err == nil {
			t.Errorf("ProxyAddr(%q) accepted", bad)
		}
	}
	if _, err := parseList("127.0.0.1:4000,[::1]:8080"); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"10.0.0.1:80", "localhost:80", "127.0.0.1"} {
		if _, err := parseList(bad); err == nil {
			t.Errorf("parseList(%q) accepted", bad)
		}
	}
	var out strings.Builder
	if code := serveMain("127.0.0.1:4000", &out, env(nil)); code != 1 || !strings.Contains(out.String(), "no HTTP_PROXY") {
		t.Errorf("without a proxy: %d %q", code, out.String())
	}
}
