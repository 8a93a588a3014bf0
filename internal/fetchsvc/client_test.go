package fetchsvc_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
	"github.com/fullsend-ai/fullsend/internal/fetchsvc"
	"github.com/fullsend-ai/fullsend/internal/sandbox/egress"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestClientFromEnvRefuses(t *testing.T) {
	tok := strings.Repeat("ab", 32)
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"no url":      {map[string]string{fetchsvc.EnvToken: tok}, "FULLSEND_FETCH_URL is not set"},
		"no token":    {map[string]string{fetchsvc.EnvURL: "http://127.0.0.1:1"}, "FULLSEND_FETCH_TOKEN is not set"},
		"https":       {map[string]string{fetchsvc.EnvURL: "https://127.0.0.1:1", fetchsvc.EnvToken: tok}, "want http://IP:PORT"},
		"not loop":    {map[string]string{fetchsvc.EnvURL: "http://10.0.0.1:80", fetchsvc.EnvToken: tok}, "loopback"},
		"host name":   {map[string]string{fetchsvc.EnvURL: "http://localhost:80", fetchsvc.EnvToken: tok}, "loopback"},
		"no port":     {map[string]string{fetchsvc.EnvURL: "http://127.0.0.1", fetchsvc.EnvToken: tok}, "loopback"},
		"userinfo":    {map[string]string{fetchsvc.EnvURL: "http://u:p@127.0.0.1:1", fetchsvc.EnvToken: tok}, "want http://IP:PORT"},
		"path":        {map[string]string{fetchsvc.EnvURL: "http://127.0.0.1:1/x", fetchsvc.EnvToken: tok}, "want http://IP:PORT"},
		"unspecified": {map[string]string{fetchsvc.EnvURL: "http://0.0.0.0:1", fetchsvc.EnvToken: tok}, "loopback"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := fetchsvc.ClientFromEnv(envOf(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), tok) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	_, err := fetchsvc.ClientFromEnv(envOf(nil))
	if !errors.Is(err, fetchsvc.ErrNotEnabled) {
		t.Errorf("no env: %v", err)
	}
}

func TestClientRoundTrip(t *testing.T) {
	w, s, d := lintService(t, "lint", map[string]string{"x/y.txt": "y"})
	c, err := fetchsvc.ClientFromEnv(envOf(s.SandboxEnv("")))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.FetchSkill(context.Background(), pin(w.tree("skills/lint"), d))
	if err != nil || res.Path != "/sandbox/claude-config/skills/lint" {
		t.Fatalf("FetchSkill: %+v %v", res, err)
	}
	_, err = c.FetchSkill(context.Background(), w.tree("skills/lint"))
	var se *fetchsvc.ServiceError
	if !errors.As(err, &se) || se.Status != http.StatusForbidden || se.Code != fetchsvc.CodeMissingHash || !strings.Contains(err.Error(), "#sha256=") {
		t.Fatalf("unpinned: %v", err)
	}
	// A wrong token is the service's 401.
	env := s.SandboxEnv("")
	env[fetchsvc.EnvToken] = "0" + s.Token()[1:]
	if s.Token()[0] == '0' {
		env[fetchsvc.EnvToken] = "1" + s.Token()[1:]
	}
	bad, _ := fetchsvc.ClientFromEnv(envOf(env))
	if _, err := bad.FetchSkill(context.Background(), pin(w.tree("skills/lint"), d)); !errors.As(err, &se) || se.Code != fetchsvc.CodeUnauthorized {
		t.Fatalf("wrong token: %v", err)
	}
	// A dead service: the error names the address, not the token.
	addr := s.Addr()
	s.Close()
	_, err = c.FetchSkill(context.Background(), pin(w.tree("skills/lint"), d))
	if err == nil || !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), s.Token()) {
		t.Fatalf("dead service: %v", err)
	}
}

// Inside a sandbox the service is reached through the sandbox's egress
// proxy (a loopback http_proxy), whatever NO_PROXY says; a proxy that is
// not on loopback never sees the request (nor the token).
func TestClientUsesSandboxProxy(t *testing.T) {
	w, s, d := lintService(t, "lint", nil)
	u := pin(w.tree("skills/lint"), d)

	proxyFor := func(services []string) string {
		p, err := egress.New(egress.Config{Services: services})
		if err != nil {
			t.Fatal(err)
		}
		return "http://" + fetchtest.Serve(t, p)
	}
	env := s.SandboxEnv("")
	env["NO_PROXY"], env["no_proxy"] = "localhost,127.0.0.1,::1", "localhost,127.0.0.1,::1"

	// A proxy admitting the service: success.
	env["http_proxy"] = proxyFor(s.Services())
	c, err := fetchsvc.ClientFromEnv(envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.FetchSkill(context.Background(), u); err != nil || res.Name != "lint" {
		t.Fatalf("through the proxy: %+v %v", res, err)
	}
	// A proxy that does not admit it: refused by the proxy, which proves
	// the request went through it despite NO_PROXY.
	env["http_proxy"] = ""
	env["HTTP_PROXY"] = proxyFor(nil)
	c, _ = fetchsvc.ClientFromEnv(envOf(env))
	_, err = c.FetchSkill(context.Background(), u)
	var se *fetchsvc.ServiceError
	if !errors.As(err, &se) || se.Status != http.StatusForbidden || se.Code != "transport" || !strings.Contains(err.Error(), "denied") {
		t.Fatalf("through a refusing proxy: %v", err)
	}
	// A non-loopback proxy is ignored: direct connection.
	env["HTTP_PROXY"] = "http://192.0.2.1:3128"
	c, _ = fetchsvc.ClientFromEnv(envOf(env))
	if _, err := c.FetchSkill(context.Background(), u); err != nil {
		t.Fatalf("with a remote proxy configured: %v", err)
	}
	if s.Service().Used() != 2 {
		t.Errorf("used %d, want 2", s.Service().Used())
	}
}
