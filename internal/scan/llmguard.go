package scan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Rule ids of the ML layer.
const (
	RuleMLInjection   = "llm-guard/prompt-injection"
	RuleMLUnavailable = "llm-guard/unavailable"
)

// maxLLMGuardResponse bounds the response body read from the ML server.
const maxLLMGuardResponse = 1 << 20

// llmGuardScanner asks an LLM Guard API server (POST {url}/analyze/prompt,
// body {"prompt": text}, optional bearer token) whether content is a prompt
// injection. The server answers {"is_valid": bool, "scanners": {name: risk
// score in [-1,1]}, "sanitized_prompt": …}. The injection score is the
// highest positive risk score (0 if none). Content fails when the server
// says it is not valid, or when 1-score is below the origin's threshold.
type llmGuardScanner struct {
	endpoint string
	token    string
	client   *http.Client
	local    float64
	remote   float64
	failMode string
}

// NewLLMGuardScanner returns the ML-layer scanner. The HTTP client follows no
// redirects (the bearer token goes only to the configured URL) and ignores
// proxy settings; it is the one outbound HTTP call outside internal/fetch,
// aimed at a server the org configured explicitly (often on an internal
// network, which fetch would refuse).
func NewLLMGuardScanner(g LLMGuard, token string, local, remote float64, failMode string) Scanner {
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = DefaultLLMGuardTimeout
	}
	tr := &http.Transport{Proxy: nil, MaxIdleConns: 4, IdleConnTimeout: 30 * time.Second, ResponseHeaderTimeout: timeout}
	return &llmGuardScanner{
		endpoint: strings.TrimRight(g.URL, "/") + "/analyze/prompt",
		token:    token,
		client: &http.Client{Timeout: timeout, Transport: tr,
			CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("redirect refused") }},
		local: local, remote: remote, failMode: failMode,
	}
}

func (*llmGuardScanner) Name() string { return "llm-guard" }

type llmGuardResponse struct {
	IsValid  *bool              `json:"is_valid"`
	Scanners map[string]float64 `json:"scanners"`
}

func (s *llmGuardScanner) Scan(ctx context.Context, content []byte, m Meta) ([]Finding, error) {
	threshold := s.local
	if m.Origin == Remote {
		threshold = s.remote
	}
	resp, err := s.ask(ctx, content)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		sev := Critical
		if s.failMode == FailOpen {
			sev = Warning
		}
		return []Finding{{Scanner: "llm-guard", Rule: RuleMLUnavailable, Severity: sev, Path: m.Path,
			Message: "ML layer unavailable: " + err.Error()}}, nil
	}
	score, top := 0.0, ""
	for _, n := range slices.Sorted(maps.Keys(resp.Scanners)) {
		if v := resp.Scanners[n]; v > score {
			score, top = v, n
		}
	}
	if score > 1 {
		score = 1
	}
	pass := *resp.IsValid && 1-score >= threshold
	if pass {
		return nil, nil
	}
	why := fmt.Sprintf("injection score %.2f (scanner %s) exceeds what the %s threshold %.2f allows (%.2f)", score, top, m.Origin, threshold, 1-threshold)
	if !*resp.IsValid && top == "" {
		why = "the server marked the content invalid"
	} else if !*resp.IsValid {
		why = fmt.Sprintf("the server marked the content invalid (scanner %s, risk %.2f)", top, score)
	}
	return []Finding{{Scanner: "llm-guard", Rule: RuleMLInjection, Severity: Critical, Path: m.Path,
		Message: "ML prompt-injection check failed: " + why}}, nil
}

func (s *llmGuardScanner) ask(ctx context.Context, content []byte) (*llmGuardResponse, error) {
	body, err := json.Marshal(map[string]string{"prompt": string(bytes.ToValidUTF8(content, []byte("\uFFFD")))})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.endpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	res, err := s.client.Do(req)
	if err != nil {
		var ue interface{ Timeout() bool }
		if errors.As(err, &ue) && ue.Timeout() {
			return nil, fmt.Errorf("%s: timed out after %s", s.endpoint, s.client.Timeout)
		}
		return nil, fmt.Errorf("%s: %s", s.endpoint, redactToken(err.Error(), s.token))
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxLLMGuardResponse+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading response: %w", s.endpoint, err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d", s.endpoint, res.StatusCode)
	}
	if len(data) > maxLLMGuardResponse {
		return nil, fmt.Errorf("%s: response larger than %d bytes", s.endpoint, maxLLMGuardResponse)
	}
	var r llmGuardResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: bad response: %w", s.endpoint, err)
	}
	if r.IsValid == nil {
		return nil, fmt.Errorf("%s: bad response: no is_valid field", s.endpoint)
	}
	return &r, nil
}

func redactToken(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "<token>")
}
