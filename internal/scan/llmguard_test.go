package scan

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeLLMGuard is an LLM Guard API server on loopback. It records requests
// and answers with the configured response.
type fakeLLMGuard struct {
	*httptest.Server
	status   int
	valid    bool
	scores   map[string]float64
	delay    time.Duration
	raw      string // when set, sent instead of JSON
	requests atomic.Int32
	lastAuth atomic.Value
	lastBody atomic.Value
}

func newFakeLLMGuard(t *testing.T) *fakeLLMGuard {
	f := &fakeLLMGuard{status: http.StatusOK, valid: true, scores: map[string]float64{"PromptInjection": -1}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/analyze/prompt" {
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		f.lastAuth.Store(r.Header.Get("Authorization"))
		var body struct {
			Prompt string `json:"prompt"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("bad request body: %v", err)
		}
		f.lastBody.Store(body.Prompt)
		if f.delay > 0 {
			select {
			case <-time.After(f.delay):
			case <-r.Context().Done():
				return
			}
		}
		if f.raw != "" {
			w.WriteHeader(f.status)
			fmt.Fprint(w, f.raw)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		json.NewEncoder(w).Encode(map[string]any{"is_valid": f.valid, "scanners": f.scores, "sanitized_prompt": body.Prompt})
	}))
	t.Cleanup(f.Close)
	return f
}

func mlPipeline(t *testing.T, url, mode string, timeout time.Duration) *Pipeline {
	o := DefaultOptions()
	o.FailMode = mode
	o.LLMGuard = LLMGuard{URL: url, TokenEnv: "LLM_GUARD_TOKEN", Timeout: timeout}
	o.Getenv = func(k string) string {
		if k == "LLM_GUARD_TOKEN" {
			return "s3cr3t-token"
		}
		return ""
	}
	return newTestPipeline(t, o)
}

func mlFindings(r *Result) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Scanner == "llm-guard" {
			out = append(out, f)
		}
	}
	return out
}

func TestLLMGuardRequest(t *testing.T) {
	srv := newFakeLLMGuard(t)
	p := mlPipeline(t, srv.URL+"/", FailClosed, time.Second)
	r, err := p.Scan(context.Background(), []byte("# Agent\nBe nice."), Meta{Path: "a.md"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Blocked || len(mlFindings(r)) != 0 {
		t.Fatalf("benign content blocked: %+v", r)
	}
	if got := srv.lastAuth.Load(); got != "Bearer s3cr3t-token" {
		t.Errorf("Authorization = %v", got)
	}
	if got := srv.lastBody.Load(); got != "# Agent\nBe nice." {
		t.Errorf("prompt = %q", got)
	}
	if contains(r.Notices, NoticeMLOff) {
		t.Error("ML-off notice although configured")
	}
}

func TestLLMGuardThresholds(t *testing.T) {
	srv := newFakeLLMGuard(t)
	p := mlPipeline(t, srv.URL, FailClosed, time.Second)
	cases := []struct {
		score  float64
		valid  bool
		origin Origin
		block  bool
	}{
		{-0.5, true, Local, false},
		{0.0, true, Remote, false},
		{0.06, true, Local, false}, // 1-0.06 = 0.94 >= 0.92
		{0.06, true, Remote, true}, // 0.94 < 0.95: remote is stricter
		{0.09, true, Local, true},  // 0.91 < 0.92
		{0.05, true, Remote, false},
		{0.9, true, Local, true},
		{-1, false, Local, true}, // the server's own verdict counts
	}
	for _, c := range cases {
		srv.scores = map[string]float64{"PromptInjection": c.score, "Toxicity": -1}
		srv.valid = c.valid
		r, err := p.Scan(context.Background(), []byte("text"), Meta{Path: "a.md", Origin: c.origin})
		if err != nil {
			t.Fatal(err)
		}
		fs := mlFindings(r)
		if r.Blocked != c.block || (len(fs) == 1) != c.block {
			t.Errorf("%+v: blocked=%v findings=%v", c, r.Blocked, fs)
		}
		if c.block && fs[0].Rule != RuleMLInjection {
			t.Errorf("%+v: rule %s", c, fs[0].Rule)
		}
	}
}

func TestLLMGuardUnavailable(t *testing.T) {
	// unreachable: a loopback port with nothing listening
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()

	slow := newFakeLLMGuard(t)
	slow.delay = 2 * time.Second
	broken := newFakeLLMGuard(t)
	broken.status = http.StatusInternalServerError
	garbage := newFakeLLMGuard(t)
	garbage.raw = "<html>proxy error</html>"
	noField := newFakeLLMGuard(t)
	noField.raw = `{"scanners": {}}`

	for name, url := range map[string]string{
		"unreachable": dead, "slow": slow.URL, "500": broken.URL, "not json": garbage.URL, "no is_valid": noField.URL,
	} {
		for _, mode := range []string{FailClosed, FailOpen} {
			t.Run(name+"/"+mode, func(t *testing.T) {
				p := mlPipeline(t, url, mode, 200*time.Millisecond)
				start := time.Now()
				r, err := p.Scan(context.Background(), []byte("text"), Meta{Path: "a.md", Origin: Remote})
				if err != nil {
					t.Fatal(err)
				}
				if d := time.Since(start); d > 1500*time.Millisecond {
					t.Errorf("took %v: timeout not applied", d)
				}
				fs := mlFindings(r)
				if len(fs) != 1 || fs[0].Rule != RuleMLUnavailable || !strings.Contains(fs[0].Message, "ML layer unavailable") {
					t.Fatalf("findings %+v", fs)
				}
				want := Critical
				if mode == FailOpen {
					want = Warning
				}
				if fs[0].Severity != want || r.Blocked != (mode == FailClosed) {
					t.Errorf("severity %s blocked %v", fs[0].Severity, r.Blocked)
				}
				if strings.Contains(fs[0].Message, "s3cr3t-token") {
					t.Errorf("token in message: %s", fs[0].Message)
				}
				if name == "slow" && !strings.Contains(fs[0].Message, "timed out") {
					t.Errorf("slow server: %s", fs[0].Message)
				}
			})
		}
	}
}

func TestLLMGuardNotConfigured(t *testing.T) {
	p := newTestPipeline(t, DefaultOptions())
	r, err := p.Scan(context.Background(), []byte("text"), Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if !contains(r.Notices, NoticeMLOff) {
		t.Fatalf("no notice that the ML layer is off: %v", r.Notices)
	}
}

func TestLLMGuardNoRedirect(t *testing.T) {
	target := newFakeLLMGuard(t)
	redirector := httptest.NewServer(http.RedirectHandler(target.URL+"/analyze/prompt", http.StatusTemporaryRedirect))
	defer redirector.Close()
	p := mlPipeline(t, redirector.URL, FailClosed, time.Second)
	r, _ := p.Scan(context.Background(), []byte("text"), Meta{})
	if !r.Blocked || target.requests.Load() != 0 {
		t.Fatalf("redirect followed (token would travel): %+v, %d requests", r, target.requests.Load())
	}
}
