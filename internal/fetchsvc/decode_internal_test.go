package fetchsvc

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// TestDecodeRequest: the body is exactly one {"url": "…"} object (encoding/json,
// unknown fields and trailing data refused, at most MaxRequestBytes).
func TestDecodeRequest(t *testing.T) {
	for _, tc := range []struct {
		body, want string // want "" = 400 bad_request
	}{
		{`{"url":"https://github.com/o/r/tree/main/x#sha256=ab"}`, "https://github.com/o/r/tree/main/x#sha256=ab"},
		{" \t\r\n{ \"url\" : \"https://x/é\" } \n", "https://x/é"},
		{`{"url":"https://x/\u0041"}`, "https://x/A"},
		{`{"url":"a\"b"}`, `a"b`},
		{`{"URL":"https://x/"}`, "https://x/"}, // encoding/json matches keys case-insensitively
		{`{"url":"a","url":"b"}`, "b"},
		{`{"url":""}`, ""},
		{`{"url":"a","x":1}`, ""},
		{`{"url":"a"}{}`, ""},
		{`{"url":"a"} x`, ""},
		{`{"url":"a"`, ""},
		{`{"url":1}`, ""},
		{`["url"]`, ""},
		{``, ""},
		{`{"url":"` + strings.Repeat("a", MaxRequestBytes) + `"}`, ""},
		{`{"url":"a"}` + strings.Repeat(" ", MaxRequestBytes), ""},
	} {
		r := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(tc.body))
		got, err := decodeRequest(httptest.NewRecorder(), r)
		name := tc.body
		if len(name) > 60 {
			name = name[:60] + "…"
		}
		switch {
		case tc.want == "" && (err == nil || err.Code != CodeBadRequest || err.Status != http.StatusBadRequest):
			t.Errorf("decodeRequest(%q) = %q, %v; want %s", name, got.URL, err, CodeBadRequest)
		case tc.want != "" && (err != nil || got.URL != tc.want):
			t.Errorf("decodeRequest(%q) = %q, %v; want %q", name, got.URL, err, tc.want)
		}
	}
}

// TestBodies: the answers keep their wire shape (field names, which are
// optional), whatever bytes their strings hold.
func TestBodies(t *testing.T) {
	res := &Response{Path: "/sandbox/claude-config/skills/x", Name: "x", URL: "https://github.com/o/r/tree/main/<x>&é", SHA256: "ab", CacheHit: true, Remaining: 7}
	dep := *res
	dep.CacheHit, dep.Remaining = false, 0
	dep.Dependencies = []Placed{{Name: "d", Path: "/s/d", URL: "https://x/d", SHA256: "cd"}}
	for _, tc := range []struct {
		v    any
		want string
	}{
		{res, `{"path":"/sandbox/claude-config/skills/x","name":"x","url":"https://github.com/o/r/tree/main/<x>&é","sha256":"ab","cache_hit":true,"remaining":7}`},
		{&dep, `{"path":"/sandbox/claude-config/skills/x","name":"x","url":"https://github.com/o/r/tree/main/<x>&é","sha256":"ab","cache_hit":false,
		  "dependencies":[{"name":"d","path":"/s/d","url":"https://x/d","sha256":"cd"}],"remaining":0}`},
		{errorBody(newErr(http.StatusForbidden, CodeNotAllowed, nil, "no \"%s\"", "x")), `{"error":{"code":"not_allowed","message":"no \"x\""}}`},
	} {
		rec := httptest.NewRecorder()
		writeJSON(rec, http.StatusTeapot, tc.v)
		body := rec.Body.String()
		if rec.Code != http.StatusTeapot || rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("status %d, headers %v", rec.Code, rec.Header())
		}
		if strings.Count(body, "\n") != 1 || !strings.HasSuffix(body, "}\n") {
			t.Errorf("body %q: want one JSON line", body)
		}
		var got, want any
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("body %s\nwant %s", body, tc.want)
		}
	}
}
