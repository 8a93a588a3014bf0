package fetchsvc

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFastURL: the direct decoder answers only for the plain
// {"url": "…"} form and then exactly what encoding/json decodes; every
// other body is left to encoding/json (and decodeRequest's answer is the
// strict decoder's).
func TestFastURL(t *testing.T) {
	strict := func(b string) (string, bool) {
		var req Request
		dec := json.NewDecoder(strings.NewReader(b))
		dec.DisallowUnknownFields()
		if dec.Decode(&req) != nil {
			return "", false
		}
		if _, err := dec.Token(); err != io.EOF {
			return "", false
		}
		return req.URL, req.URL != ""
	}
	for _, tc := range []struct {
		body string
		fast bool
	}{
		{`{"url":"https://github.com/o/r/tree/main/x#sha256=ab"}`, true},
		{" \t\r\n{ \"url\" : \"https://x/é\" } \n", true},
		{`{"url":""}`, true},
		{`{"URL":"https://x/"}`, false},
		{`{"url":"https://x/\u0041"}`, false},
		{`{"url":"a\"b"}`, false},
		{`{"url":"a","url":"b"}`, false},
		{`{"url":"a","x":1}`, false},
		{`{"url":"a"}{}`, false},
		{`{"url":"a"} x`, false},
		{`{"url":"a"`, false},
		{`{"url":"a` + "\x00" + `"}`, false},
		{`{"url":"a` + "\xff" + `"}`, false},
		{`{"url":1}`, false},
		{`["url"]`, false},
		{``, false},
	} {
		u, ok := fastURL([]byte(tc.body))
		if ok != tc.fast {
			t.Errorf("fastURL(%q) ok = %v, want %v", tc.body, ok, tc.fast)
		}
		if ok {
			var req Request
			if err := json.Unmarshal([]byte(tc.body), &req); err != nil || req.URL != string(u) {
				t.Errorf("fastURL(%q) = %q; encoding/json: %q, %v", tc.body, u, req.URL, err)
			}
		}
		want, wok := strict(tc.body)
		r := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(tc.body))
		got, err := decodeRequest(httptest.NewRecorder(), r)
		if (err == nil) != wok || (err == nil && got.URL != want) {
			t.Errorf("decodeRequest(%q) = %q, %v; strict decoder: %q, %v", tc.body, got.URL, err, want, wok)
		}
	}
	big := `{"url":"` + strings.Repeat("a", MaxRequestBytes) + `"}`
	r := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(big))
	if _, err := decodeRequest(httptest.NewRecorder(), r); err == nil || err.Code != CodeBadRequest {
		t.Errorf("decodeRequest(%d bytes) = %v, want %s", len(big), err, CodeBadRequest)
	}
}

// TestAppendResponse: the direct encoder writes exactly json.Marshal's
// body, and leaves anything it cannot write so to encoding/json.
func TestAppendResponse(t *testing.T) {
	res := &Response{Path: "/sandbox/claude-config/skills/x", Name: "x", URL: "https://github.com/o/r/tree/main/x", SHA256: "ab", CacheHit: true, Remaining: 7}
	dep := *res
	dep.CacheHit, dep.Remaining = false, 0
	dep.Dependencies = []Placed{{Name: "d", Path: "/s/d", URL: "https://x/d", SHA256: "cd"}, {Name: "e", Path: "/s/e", URL: "https://x/e", SHA256: "ef"}}
	for _, r := range []*Response{res, &dep, {}} {
		want, _ := json.Marshal(r)
		got, ok := appendResponse(nil, r)
		if !ok || string(got) != string(want)+"\n" {
			t.Errorf("appendResponse(%+v) = %q, %v; want %q", r, got, ok, want)
		}
	}
	for _, u := range []string{"https://x/<a>", "https://x/é", "a\"b", "a&b"} {
		r := *res
		r.URL = u
		if got, ok := appendResponse(nil, &r); ok {
			t.Errorf("appendResponse(url %q) = %q: want it left to encoding/json", u, got)
		}
		d := dep
		d.Dependencies = []Placed{{Name: "d", URL: u}}
		if got, ok := appendResponse(nil, &d); ok {
			t.Errorf("appendResponse(dependency url %q) = %q: want it left to encoding/json", u, got)
		}
	}
}
