package fetchsvc_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/fetchsvc"
)

// FuzzRequest feeds arbitrary bodies (with and without the token) to the
// handler of a service with no sandbox attached: it never panics, always
// answers one of the protocol's error objects, never echoes the token and
// never takes budget.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		`{"url": "https://github.com/o/r/tree/main/skills/x#sha256=` + strings.Repeat("a", 64) + `"}`,
		`{"url": "https://example.test/lib/x"}`, `{"url": ""}`, `{}`, ``, `[]`, `{"url": 1}`,
		`{"url": "https://u:p@example.test/lib/%2e%2e/x#sha256=zz"}`, `{"url": "file:///etc/passwd"}`,
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	w := newWorld(f, newRepo())
	svc, err := fetchsvc.New(w.options())
	if err != nil {
		f.Fatal(err)
	}
	tok := svc.Token()
	allowed := map[int]bool{400: true, 401: true, 403: true, 503: true}
	f.Fuzz(func(t *testing.T, body string, auth bool) {
		req := httptest.NewRequest(http.MethodPost, fetchsvc.Path, strings.NewReader(body))
		if auth {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		rec := httptest.NewRecorder()
		svc.ServeHTTP(rec, req)
		var eb fetchsvc.ErrorBody
		if !allowed[rec.Code] || json.Unmarshal(rec.Body.Bytes(), &eb) != nil || eb.Error.Code == "" || eb.Error.Message == "" {
			t.Fatalf("body %q: answer %d %s", body, rec.Code, rec.Body.String())
		}
		if !auth && rec.Code != http.StatusUnauthorized {
			t.Fatalf("no token but %d", rec.Code)
		}
		if strings.Contains(rec.Body.String(), tok) || svc.Used() != 0 {
			t.Fatalf("token echoed or budget used: %s", rec.Body.String())
		}
	})
}
