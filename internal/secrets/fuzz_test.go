package secrets_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/secrets"
)

// FuzzRewrite: whatever header values the sandbox sends, Rewrite either
// refuses and leaves the header as it was, or returns a header in which
// no placeholder is left (Basic credentials included), and a real value
// appears only for a secret allowed to reach the destination.
func FuzzRewrite(f *testing.F) {
	f.Add("Bearer PH_GH", "x-access-token:PH_GH", "api.github.com", true)
	f.Add("PH_ANT", "", "api.anthropic.com", true)
	f.Add("token PH_GH PH_ANT", "u:PH_ANT", "api.github.com", true)
	f.Add("PH_GH", "", "127.0.0.1", false)
	f.Add("Basic "+base64.StdEncoding.EncodeToString([]byte("a:PH_GH")), "", "evil.com", true)
	f.Add("fullsend-secret-PH_GH", "PH_GHPH_GH", "api.github.com", false)
	b, gh, ant := broker(f)
	f.Fuzz(func(t *testing.T, v, cred, host string, useTLS bool) {
		expand := func(s string) string {
			return strings.NewReplacer("PH_GH", gh, "PH_ANT", ant).Replace(s)
		}
		h := http.Header{"Authorization": {expand(v)}, "X-Api-Key": {expand(v), expand(cred)}}
		if cred != "" {
			h.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(expand(cred))))
		}
		before := h.Clone()
		d := secrets.Dest{Host: host, Port: 443, TLS: useTLS}
		if strings.HasPrefix(host, "127.") {
			d.Port = 4000
		}
		used, err := b.Rewrite(h, d)
		if err != nil {
			if !strings.Contains(err.Error(), "refused") {
				t.Fatalf("not a refusal: %v", err)
			}
			for k, vs := range before {
				if strings.Join(h[k], "\x00") != strings.Join(vs, "\x00") {
					t.Fatalf("refused, yet %s changed", k)
				}
			}
			return
		}
		allowed := map[string]bool{}
		for _, n := range used {
			allowed[n] = true
		}
		for k, vs := range h {
			for _, x := range vs {
				dec := x
				if strings.HasPrefix(x, "Basic ") {
					if d, err := base64.StdEncoding.DecodeString(x[6:]); err == nil {
						dec = string(d)
					}
				}
				for _, s := range []string{x, dec} {
					if strings.Contains(s, gh) || strings.Contains(s, ant) {
						t.Fatalf("%s: a placeholder left after Rewrite: %q", k, s)
					}
					inGH := strings.Contains(v, ghValue) || strings.Contains(cred, ghValue)
					inAnt := strings.Contains(v, antValue) || strings.Contains(cred, antValue)
					if strings.Contains(s, ghValue) && !allowed["GH_TOKEN"] && !inGH {
						t.Fatalf("%s: GH_TOKEN's value sent to %s without being allowed", k, host)
					}
					if strings.Contains(s, antValue) && !allowed["ANTHROPIC_API_KEY"] && !inAnt {
						t.Fatalf("%s: ANTHROPIC_API_KEY's value sent to %s without being allowed", k, host)
					}
				}
			}
		}
		for n := range allowed {
			if n == "GH_TOKEN" && !b.Intercepts(host, d.Port) {
				t.Fatalf("GH_TOKEN swapped for %s", host)
			}
		}
	})
}
