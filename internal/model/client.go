package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Limits and defaults of the HTTP exchange.
const (
	DefaultMaxRetries    = 4
	DefaultMaxRetryAfter = 2 * time.Minute
	DefaultCallTimeout   = 10 * time.Minute
	// MaxResponseBytes bounds a response body; a larger one is an error.
	MaxResponseBytes = 16 << 20
	// MaxErrorExcerpt bounds the body excerpt kept from a non-2xx answer.
	MaxErrorExcerpt = 512
	backoffBase     = 500 * time.Millisecond
	backoffMax      = 30 * time.Second
)

// Call records one HTTP attempt (one line of calls.jsonl).
type Call struct {
	Seq           int64     `json:"seq"`     // request number of this client, from 1
	Attempt       int       `json:"attempt"` // 1 = first try
	API           API       `json:"api"`
	Model         string    `json:"model"`
	URL           string    `json:"url"`
	Start         time.Time `json:"start"`
	HeaderMS      float64   `json:"header_ms,omitempty"`      // time to response headers
	DurationMS    float64   `json:"duration_ms"`              // until the body was read
	Stream        bool      `json:"stream,omitempty"`         // the body was an event stream
	FirstEventMS  float64   `json:"first_event_ms,omitempty"` // streams: time to the first event
	Status        int       `json:"status,omitempty"`
	RequestID     string    `json:"request_id,omitempty"`
	RequestBytes  int       `json:"request_bytes"`
	ResponseBytes int       `json:"response_bytes"`
	RetryAfterMS  int64     `json:"retry_after_ms,omitempty"` // wait before the next attempt
	WillRetry     bool      `json:"will_retry,omitempty"`
	InputTokens   int64     `json:"input_tokens,omitempty"`
	OutputTokens  int64     `json:"output_tokens,omitempty"`
	// Prompt-cache counts (see Usage), when the server reports them.
	CacheReadInputTokens     int64  `json:"cache_read_input_tokens,omitempty"`
	CacheCreationInputTokens int64  `json:"cache_creation_input_tokens,omitempty"`
	Error                    string `json:"error,omitempty"`
	BodyExcerpt              string `json:"body_excerpt,omitempty"` // non-2xx only, redacted
}

// Options tune a Client. The zero value is usable.
type Options struct {
	// HTTPClient performs the requests (default: a client with
	// DefaultCallTimeout and no cookie jar). Its own redirects are refused.
	HTTPClient *http.Client
	// MaxRetries after the first attempt; 0 means DefaultMaxRetries, a
	// negative value means none.
	MaxRetries int
	// MaxRetryAfter: a server asking to wait longer ends the retries.
	MaxRetryAfter time.Duration
	// Sleep waits between attempts (tests inject a recorder). It must return
	// ctx.Err() when ctx ends first.
	Sleep func(ctx context.Context, d time.Duration) error
	// Record receives every attempt, in order, from the calling goroutine.
	Record func(Call)
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Client sends Requests to one configured endpoint. It is safe for
// concurrent use.
type Client struct {
	cfg      Config
	o        Options
	hc       *http.Client
	endpoint string
	seq      atomic.Int64
}

// New checks cfg and returns a client.
func New(cfg Config, o Options) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: DefaultCallTimeout}
	}
	// Copy so we never change the caller's client; refuse redirects: a
	// redirect would carry our credential to another URL.
	c2 := *hc
	c2.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	} else if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if o.Sleep == nil {
		o.Sleep = sleepCtx
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Client{cfg: cfg, o: o, hc: &c2, endpoint: cfg.Endpoint()}, nil
}

// Config returns the client's configuration.
func (c *Client) Config() Config { return c.cfg }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// APIError is an HTTP-level failure of the model API.
type APIError struct {
	API       API
	URL       string
	Status    int    // 0 when no response arrived
	RequestID string // server request id, when sent
	Message   string // redacted excerpt or transport error
	Attempts  int
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model API %s", e.URL)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": status %d", e.Status)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " (request id %s)", e.RequestID)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	return b.String()
}

// Retryable reports whether the status is one this package retries.
func (e *APIError) Retryable() bool { return retryableStatus(e.Status) || e.Status == 0 }

// ProtocolError is a 2xx response that could not be understood.
type ProtocolError struct {
	URL       string
	RequestID string
	Err       error
}

func (e *ProtocolError) Error() string {
	id := ""
	if e.RequestID != "" {
		id = " (request id " + e.RequestID + ")"
	}
	return fmt.Sprintf("model API %s%s: bad response: %v", e.URL, id, e.Err)
}
func (e *ProtocolError) Unwrap() error { return e.Err }

func retryableStatus(s int) bool {
	return s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500
}

// Complete sends req and returns the model's answer, retrying as documented.
func (c *Client) Complete(ctx context.Context, req *Request) (resp *Response, err error) {
	model := req.Model
	if model == "" {
		model = c.cfg.Model
	}
	ctx, span := c.startChat(ctx, model, req)
	defer func() { c.endChat(span, resp, err) }()
	var body []byte
	switch c.cfg.API {
	case APIAnthropic:
		body, err = encodeAnthropic(model, req)
	default:
		body, err = encodeOpenAI(model, req)
	}
	if err != nil {
		return nil, fmt.Errorf("model request: %w", err)
	}
	seq := c.seq.Add(1)
	for attempt := 1; ; attempt++ {
		rec := Call{Seq: seq, Attempt: attempt, API: c.cfg.API, Model: model, URL: c.endpoint, RequestBytes: len(body)}
		resp, wait, aerr := c.attempt(ctx, body, req.OnDelta, &rec)
		retry := aerr != nil && wait >= 0 && attempt <= c.o.MaxRetries && ctx.Err() == nil
		if aerr != nil {
			rec.Error = c.cfg.Key.redact(aerr.Error())
		}
		if retry {
			rec.WillRetry = true
			rec.RetryAfterMS = wait.Milliseconds()
		}
		if resp != nil {
			rec.InputTokens, rec.OutputTokens = resp.Usage.InputTokens, resp.Usage.OutputTokens
			rec.CacheReadInputTokens, rec.CacheCreationInputTokens = resp.Usage.CacheReadInputTokens, resp.Usage.CacheCreationInputTokens
		}
		if c.o.Record != nil {
			c.o.Record(rec)
		}
		if retry {
			traceRetry(span, rec)
		}
		if aerr == nil {
			resp.Attempts = attempt
			if req.OnDelta != nil && !rec.Stream {
				c.deliverWhole(resp, req.OnDelta)
			}
			return resp, nil
		}
		if !retry {
			var ae *APIError
			if errors.As(aerr, &ae) {
				ae.Attempts = attempt
			}
			if ctx.Err() != nil && !errors.Is(aerr, ctx.Err()) {
				return nil, fmt.Errorf("model API %s: %w", c.endpoint, ctx.Err())
			}
			return nil, aerr
		}
		if err := c.o.Sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("model API %s: waiting to retry: %w", c.endpoint, err)
		}
	}
}

// attempt performs one HTTP exchange. wait < 0 means "do not retry";
// otherwise it is the delay before the next attempt. With onDelta set the
// request asks for a stream, and a 2xx event stream is read by readStream.
func (c *Client) attempt(ctx context.Context, body []byte, onDelta func(Delta), rec *Call) (*Response, time.Duration, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, -1, &APIError{API: c.cfg.API, URL: c.endpoint, Message: "building request: " + err.Error()}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if onDelta != nil {
		hreq.Header.Set("Accept", "text/event-stream")
	}
	hreq.Header.Set("User-Agent", "fullsend")
	switch c.cfg.API {
	case APIAnthropic:
		hreq.Header.Set("anthropic-version", "2023-06-01")
		if c.cfg.Auth == AuthBearer {
			hreq.Header.Set("x-api-key", c.cfg.Key.Reveal())
		}
	default:
		if c.cfg.Auth == AuthBearer {
			hreq.Header.Set("Authorization", "Bearer "+c.cfg.Key.Reveal())
		}
	}
	start := c.o.Now()
	rec.Start = start.UTC()
	hresp, err := c.hc.Do(hreq)
	rec.HeaderMS = ms(c.o.Now().Sub(start))
	if err != nil {
		rec.DurationMS = rec.HeaderMS
		if ctx.Err() != nil {
			return nil, -1, fmt.Errorf("model API %s: %w", c.endpoint, ctx.Err())
		}
		return nil, c.backoff(rec.Attempt), &APIError{API: c.cfg.API, URL: c.endpoint, Message: c.cfg.Key.redact(transportMessage(err))}
	}
	defer hresp.Body.Close()
	rec.Status = hresp.StatusCode
	rec.RequestID = requestID(hresp.Header)
	if onDelta != nil && hresp.StatusCode >= 200 && hresp.StatusCode <= 299 && isEventStream(hresp.Header) {
		rec.Stream = true
		return c.readStream(ctx, hresp.Body, onDelta, rec, start)
	}
	data, rerr := io.ReadAll(io.LimitReader(hresp.Body, MaxResponseBytes+1))
	rec.ResponseBytes = len(data)
	rec.DurationMS = ms(c.o.Now().Sub(start))
	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		excerpt := c.excerpt(data)
		rec.BodyExcerpt = excerpt
		e := &APIError{API: c.cfg.API, URL: c.endpoint, Status: hresp.StatusCode, RequestID: rec.RequestID, Message: excerpt}
		if hresp.StatusCode >= 300 && hresp.StatusCode < 400 {
			e.Message = "redirect refused (check the base URL)"
		}
		if !retryableStatus(hresp.StatusCode) {
			return nil, -1, e
		}
		wait, ok := retryAfter(hresp.Header, c.o.Now())
		if !ok {
			wait = c.backoff(rec.Attempt)
		} else if wait > c.o.MaxRetryAfter {
			e.Message = fmt.Sprintf("server asked to retry after %s (more than %s); giving up: %s", wait, c.o.MaxRetryAfter, excerpt)
			return nil, -1, e
		}
		return nil, wait, e
	}
	if rerr != nil {
		if ctx.Err() != nil {
			return nil, -1, fmt.Errorf("model API %s: %w", c.endpoint, ctx.Err())
		}
		return nil, c.backoff(rec.Attempt), &APIError{API: c.cfg.API, URL: c.endpoint, Status: hresp.StatusCode, RequestID: rec.RequestID, Message: "reading body: " + c.cfg.Key.redact(rerr.Error())}
	}
	if len(data) > MaxResponseBytes {
		return nil, -1, &ProtocolError{URL: c.endpoint, RequestID: rec.RequestID, Err: fmt.Errorf("body larger than %d bytes", MaxResponseBytes)}
	}
	var resp *Response
	switch c.cfg.API {
	case APIAnthropic:
		resp, err = decodeAnthropic(data)
	default:
		resp, err = decodeOpenAI(data)
	}
	if err != nil {
		return nil, -1, &ProtocolError{URL: c.endpoint, RequestID: rec.RequestID, Err: errors.New(c.cfg.Key.redact(err.Error()))}
	}
	if rec.RequestID == "" {
		rec.RequestID = resp.RequestID
	}
	resp.RequestID = rec.RequestID
	return resp, 0, nil
}

func (c *Client) excerpt(data []byte) string {
	s := string(data)
	if len(s) > MaxErrorExcerpt {
		cut := MaxErrorExcerpt
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	s = strings.Join(strings.Fields(s), " ")
	return c.cfg.Key.redact(s)
}

func (c *Client) backoff(attempt int) time.Duration {
	d := backoffBase << (attempt - 1)
	if d > backoffMax || d <= 0 {
		d = backoffMax
	}
	// Up to 20% jitter so parallel runs do not retry in lockstep.
	return d + time.Duration(rand.Int64N(int64(d)/5+1))
}

// retryAfter reads Retry-After (seconds or HTTP date) or the vendors'
// retry-after-ms.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
			return time.Duration(f * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		d := t.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

func requestID(h http.Header) string {
	for _, k := range []string{"request-id", "x-request-id", "x-amzn-requestid", "cf-ray"} {
		if v := h.Get(k); v != "" {
			if len(v) > 200 {
				v = v[:200]
			}
			return v
		}
	}
	return ""
}

// transportMessage drops the URL net/http puts in *url.Error (we name the
// endpoint ourselves).
func transportMessage(err error) string {
	type unwrapper interface{ Unwrap() error }
	var ue interface {
		unwrapper
		Timeout() bool
	}
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner.Error()
		}
	}
	return err.Error()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
