package trace

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

const (
	// MaxExportBytes bounds one export request before compression; a
	// bigger batch is refused, not truncated.
	MaxExportBytes = 64 << 20
	// MaxResponseBytes bounds what is read of a collector's response.
	MaxResponseBytes = 4 << 20
	// retryBudgetNoTimeout bounds the retries of one export when
	// OTEL_EXPORTER_OTLP_TIMEOUT=0 leaves it without a timeout.
	retryBudgetNoTimeout = time.Minute
)

// ErrExporterShutDown is what an export after Shutdown returns.
var ErrExporterShutDown = errors.New("OTLP trace exporter: shut down")

// otlpExporter is an sdktrace.SpanExporter sending spans to a collector
// over OTLP/HTTP with the protobuf encoding. One export is one POST,
// retried on 429, 502, 503 and 504 (waiting at least what Retry-After
// asks) and on a reset or timed-out connection, for at most the export
// timeout. It is safe for concurrent use.
type otlpExporter struct {
	cfg       exporterConfig
	client    *http.Client
	userAgent string
	// backoff is the wait before the first retry; it doubles (with ±50%
	// jitter) up to maxBackoff.
	backoff, maxBackoff time.Duration
	// noTimeoutBudget bounds the retries when the timeout is 0.
	noTimeoutBudget time.Duration
	maxExportBytes  int // MaxExportBytes; smaller in tests

	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup
	stopCtx  context.Context // cancelled when Shutdown gives up waiting
	stop     context.CancelFunc
}

var _ sdktrace.SpanExporter = (*otlpExporter)(nil)

// newOTLPExporter reads the OTEL_EXPORTER_OTLP_* variables through getenv
// (see readExporterConfig) and returns an exporter; it starts nothing.
func newOTLPExporter(getenv func(string) string, version string) (*otlpExporter, error) {
	cfg, err := readExporterConfig(getenv, os.ReadFile)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone() // proxies from the environment, as before
	if cfg.tls != nil {
		tr.TLSClientConfig = cfg.tls
	}
	e := &otlpExporter{
		cfg:             cfg,
		client:          &http.Client{Transport: tr},
		userAgent:       "fullsend/" + version,
		backoff:         time.Second,
		maxBackoff:      8 * time.Second,
		noTimeoutBudget: retryBudgetNoTimeout,
		maxExportBytes:  MaxExportBytes,
	}
	e.stopCtx, e.stop = context.WithCancel(context.Background())
	return e, nil
}

// ExportSpans sends spans in one request; the error says why the
// collector did not take them all (a partial success is an error too).
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrExporterShutDown
	}
	e.inflight.Add(1)
	e.mu.Unlock()
	defer e.inflight.Done()

	body, err := encodeRequest(spans)
	if err != nil {
		return err
	}
	if len(body) > e.maxExportBytes {
		return fmt.Errorf("OTLP trace export: %d spans make %d bytes, more than the %d a request may carry", len(spans), len(body), e.maxExportBytes)
	}
	if e.cfg.gzip {
		if body, err = gzipped(body); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(e.stopCtx, cancel)()
	budget := e.noTimeoutBudget
	if e.cfg.timeout > 0 {
		budget = e.cfg.timeout
		ctx, cancel = context.WithTimeout(ctx, e.cfg.timeout)
		defer cancel()
	}
	return e.send(ctx, body, time.Now().Add(budget))
}

// send posts body until it is taken, the error is not one to retry, or the
// next wait would end after until or after ctx's deadline.
func (e *otlpExporter) send(ctx context.Context, body []byte, until time.Time) error {
	wait := e.backoff
	var last error
	for {
		err := e.post(ctx, body)
		if err != nil && last != nil && ctx.Err() != nil {
			// Say why the earlier attempts failed, not only that time ran out.
			return fmt.Errorf("%w (%v)", last, context.Cause(ctx))
		}
		last = err
		var re *retryableError
		if err == nil || !errors.As(err, &re) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (%v)", err, context.Cause(ctx))
		}
		d := max(jitter(wait), re.retryAfter)
		end := time.Now().Add(d)
		if dl, ok := ctx.Deadline(); end.After(until) || (ok && end.After(dl)) {
			return fmt.Errorf("%w (no time left to retry after %v)", err, d.Round(time.Millisecond))
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (%v)", err, context.Cause(ctx))
		case <-t.C:
		}
		wait = min(2*wait, e.maxBackoff)
	}
}

// jitter spreads d between d/2 and 3d/2.
func jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(rand.Int64N(int64(d)+1))
}

// retryableError is a failed attempt worth repeating, at the earliest
// after retryAfter.
type retryableError struct {
	err        error
	retryAfter time.Duration
}

func (e *retryableError) Error() string { return e.err.Error() }
func (e *retryableError) Unwrap() error { return e.err }

// post makes one attempt.
func (e *otlpExporter) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("OTLP trace export to %s: %w", e.cfg.url, err)
	}
	req.Header.Set("User-Agent", e.userAgent)
	for k, v := range e.cfg.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.cfg.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// *url.Error names the method and the URL (never the headers).
		err = fmt.Errorf("OTLP trace export: %w", err)
		if transient(err) && ctx.Err() == nil {
			return &retryableError{err: err}
		}
		return err
	}
	defer resp.Body.Close()
	data, rerr := readBounded(resp.Body)
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		if rerr != nil {
			return fmt.Errorf("OTLP trace export to %s: reading the response: %w", e.cfg.url, rerr)
		}
		return partialSuccess(resp.Header.Get("Content-Type"), data)
	}
	err = fmt.Errorf("OTLP trace export to %s: %s%s", e.cfg.url, resp.Status, failureMessage(resp.Header.Get("Content-Type"), data))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return &retryableError{err: err, retryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	}
	return err
}

// transient reports whether a transport error may go away on its own: a
// reset or aborted connection, or a timeout (ECONNREFUSED is not: nothing
// listens there).
func transient(err error) bool {
	var ne net.Error
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) ||
		(errors.As(err, &ne) && ne.Timeout())
}

// retryAfter reads a Retry-After value: seconds, or an HTTP date.
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(min(s, int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func readBounded(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxResponseBytes+1))
	if err == nil && len(data) > MaxResponseBytes {
		err = fmt.Errorf("more than %d bytes", MaxResponseBytes)
	}
	return data, err
}

func gzipped(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		return nil, fmt.Errorf("OTLP trace export: gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("OTLP trace export: gzip: %w", err)
	}
	return buf.Bytes(), nil
}

// Shutdown waits for the exports in flight (cancelling them when ctx ends
// first) and makes every later export fail with ErrExporterShutDown. The
// batch processor exports what it holds before it calls Shutdown.
func (e *otlpExporter) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	done := make(chan struct{})
	go func() {
		e.inflight.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("OTLP trace exporter shutdown: %w", ctx.Err())
	}
	e.stop()
	e.client.CloseIdleConnections()
	return err
}

// partialSuccess reads a 2xx response: an ExportTraceServiceResponse whose
// field 1 (partial_success) holds rejected_spans (1) and error_message
// (2). Rejected spans or a message make an error; an empty body, or one
// that is not protobuf, is a plain success.
func partialSuccess(contentType string, data []byte) error {
	if len(data) == 0 || !isProtobuf(contentType) {
		return nil
	}
	var rejected int64
	var msg string
	err := eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		return eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
			switch {
			case num == 1 && typ == protowire.VarintType:
				rejected = int64(n)
			case num == 2 && typ == protowire.BytesType:
				msg = string(v)
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("OTLP trace export: the collector's response is not an ExportTraceServiceResponse: %w", err)
	}
	if rejected == 0 && msg == "" {
		return nil
	}
	if msg == "" {
		msg = "no reason given"
	}
	return fmt.Errorf("OTLP trace export: the collector rejected %d spans: %s", rejected, oneLineBounded(msg))
}

// failureMessage is ": " and the reason a collector gave for a failure: the
// message of the google.rpc.Status (field 2) it answers with in protobuf,
// else the first line of a text body; "" when there is none.
func failureMessage(contentType string, data []byte) string {
	msg := ""
	if isProtobuf(contentType) {
		_ = eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
			if num == 2 && typ == protowire.BytesType {
				msg = string(v)
			}
			return nil
		})
	} else if utf8.Valid(data) {
		msg = string(data)
	}
	if msg = oneLineBounded(msg); msg == "" {
		return ""
	}
	return ": " + msg
}

func isProtobuf(contentType string) bool {
	ct, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(ct), "application/x-protobuf")
}

// oneLineBounded is the first non-empty line of s, trimmed, at most 300
// bytes (cut on a rune boundary).
func oneLineBounded(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) > 300 {
		i := 300
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i] + "…"
	}
	return s
}

// eachField calls fn for every field of the protobuf message b: its number,
// wire type, and its bytes (length-delimited) or value (varint, fixed).
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return protowire.ParseError(l)
		}
		b = b[l:]
		var v []byte
		var n uint64
		switch typ {
		case protowire.VarintType:
			n, l = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x uint32
			x, l = protowire.ConsumeFixed32(b)
			n = uint64(x)
		case protowire.Fixed64Type:
			n, l = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, l = protowire.ConsumeBytes(b)
		default:
			l = protowire.ConsumeFieldValue(num, typ, b)
		}
		if l < 0 {
			return protowire.ParseError(l)
		}
		b = b[l:]
		if err := fn(num, typ, v, n); err != nil {
			return err
		}
	}
	return nil
}
