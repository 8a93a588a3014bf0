package trace

import (
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// exportOne exports spans to a fresh collector and returns what it got.
func exportOne(t *testing.T, env map[string]string, spans ...sdktrace.ReadOnlySpan) received {
	t.Helper()
	c := newCollector(t, nil)
	if env == nil {
		env = map[string]string{}
	}
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = c.URL
	if err := testExporter(t, env).ExportSpans(t.Context(), spans); err != nil {
		t.Fatalf("ExportSpans: %v", err)
	}
	got := c.requests()
	if len(got) != 1 {
		t.Fatalf("collector got %d requests, want 1", len(got))
	}
	return got[0]
}

func onlySpan(t *testing.T, r received) *tracepb.Span {
	t.Helper()
	if len(r.rs) != 1 || len(r.rs[0].ScopeSpans) != 1 || len(r.rs[0].ScopeSpans[0].Spans) != 1 {
		t.Fatalf("want one span, got %v", r.rs)
	}
	return r.rs[0].ScopeSpans[0].Spans[0]
}

// TestExportEndpointAndHeaders: the request goes to the endpoint's path
// plus /v1/traces with the configured headers, our User-Agent, and a
// protobuf body; the collector's headers cannot change the content type.
func TestExportEndpointAndHeaders(t *testing.T) {
	r := exportOne(t, map[string]string{
		"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20tok,X-Tenant=acme,Content-Type=text/plain",
	}, ro(stub("a", 1))...)
	if r.path != "/v1/traces" {
		t.Errorf("path %q", r.path)
	}
	if r.header.Get("Authorization") != "Bearer tok" || r.header.Get("X-Tenant") != "acme" {
		t.Errorf("headers %v", r.header)
	}
	if r.header.Get("User-Agent") != "fullsend/v-test" || r.encoding != "" {
		t.Errorf("User-Agent %q, Content-Encoding %q", r.header.Get("User-Agent"), r.encoding)
	}
	c := newCollector(t, nil)
	e := testExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": c.URL + "/custom/traces"})
	if err := e.ExportSpans(t.Context(), ro(stub("a", 1))); err != nil {
		t.Fatal(err)
	}
	if got := c.requests(); len(got) != 1 || got[0].path != "/custom/traces" {
		t.Errorf("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: requests %+v, want one to /custom/traces", got)
	}
}

func TestExportGzip(t *testing.T) {
	r := exportOne(t, map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}, ro(stub("zipped", 1))...)
	if r.encoding != "gzip" || onlySpan(t, r).Name != "zipped" {
		t.Errorf("Content-Encoding %q, spans %v", r.encoding, r.rs)
	}
}

// TestExportAttributeTypes: every attribute type arrives as the AnyValue
// the protocol defines for it.
func TestExportAttributeTypes(t *testing.T) {
	s := stub("attrs", 1)
	s.Attributes = []attribute.KeyValue{
		attribute.Bool("b", true),
		attribute.Int64("i", -42),
		attribute.Float64("f", 2.5),
		attribute.String("s", "héllo"),
		attribute.BoolSlice("bs", []bool{true, false}),
		attribute.Int64Slice("is", []int64{1, -2}),
		attribute.Float64Slice("fs", []float64{0.5, -1}),
		attribute.StringSlice("ss", []string{"x", ""}),
		attribute.ByteSlice("by", []byte{0, 1, 255}),
		attribute.Slice("sl", attribute.IntValue(7), attribute.StringValue("z")),
		attribute.Map("m", attribute.Bool("k", false)),
		{Key: "e"},
	}
	av := func(v any) *commonpb.AnyValue {
		switch v := v.(type) {
		case bool:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v}}
		case int64:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}
		case float64:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v}}
		case string:
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}
		}
		panic(v)
	}
	arr := func(vs ...any) *commonpb.AnyValue {
		a := &commonpb.ArrayValue{}
		for _, v := range vs {
			a.Values = append(a.Values, av(v))
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: a}}
	}
	want := map[string]*commonpb.AnyValue{
		"b": av(true), "i": av(int64(-42)), "f": av(2.5), "s": av("héllo"),
		"bs": arr(true, false), "is": arr(int64(1), int64(-2)), "fs": arr(0.5, -1.0), "ss": arr("x", ""),
		"by": {Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0, 1, 255}}},
		"sl": arr(int64(7), "z"),
		"m":  {Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: []*commonpb.KeyValue{{Key: "k", Value: av(false)}}}}},
		"e":  {},
	}
	got := onlySpan(t, exportOne(t, nil, ro(s)...)).Attributes
	if len(got) != len(want) {
		t.Errorf("%d attributes, want %d", len(got), len(want))
	}
	for _, kv := range got {
		if w, ok := want[kv.Key]; !ok || !proto.Equal(kv.Value, w) {
			t.Errorf("attribute %s = %v, want %v", kv.Key, kv.Value, w)
		}
	}
}

// TestExportSpanFields: every field of a span (ids, parent, trace state,
// flags, kind, times, events, links, status, dropped counts) arrives as
// the protocol defines it.
func TestExportSpanFields(t *testing.T) {
	s := stub("full", 2)
	s.SpanContext = spanCtx(traceA, 2, false, "vendor=v1")
	s.Parent = spanCtx(traceA, 1, true, "")
	s.SpanKind = oteltrace.SpanKindClient
	evAt := s.StartTime.Add(time.Millisecond)
	s.Events = []sdktrace.Event{{Name: "egress", Time: evAt, Attributes: []attribute.KeyValue{attribute.String("server.address", "example.com")}, DroppedAttributeCount: 3}}
	s.Links = []sdktrace.Link{{SpanContext: spanCtx(traceB, 9, true, "k=v"), Attributes: []attribute.KeyValue{attribute.Int("n", 1)}, DroppedAttributeCount: 4}}
	s.Status = sdktrace.Status{Code: codes.Error, Description: "boom"}
	s.Attributes = []attribute.KeyValue{attribute.String("a", "b")}
	s.DroppedAttributes, s.DroppedEvents, s.DroppedLinks = 5, 6, 7
	const hasRemote, isRemote = 0x100, 0x200
	str := func(v string) *commonpb.AnyValue {
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}
	}
	want := &tracepb.Span{
		TraceId: traceA[:], SpanId: []byte{0, 0, 0, 0, 0, 0, 0, 2}, ParentSpanId: []byte{0, 0, 0, 0, 0, 0, 0, 1},
		TraceState: "vendor=v1", Flags: 1 | hasRemote | isRemote, Name: "full", Kind: tracepb.Span_SPAN_KIND_CLIENT,
		StartTimeUnixNano: uint64(s.StartTime.UnixNano()), EndTimeUnixNano: uint64(s.EndTime.UnixNano()),
		Attributes:             []*commonpb.KeyValue{{Key: "a", Value: str("b")}},
		DroppedAttributesCount: 5, DroppedEventsCount: 6, DroppedLinksCount: 7,
		Events: []*tracepb.Span_Event{{Name: "egress", TimeUnixNano: uint64(evAt.UnixNano()),
			Attributes: []*commonpb.KeyValue{{Key: "server.address", Value: str("example.com")}}, DroppedAttributesCount: 3}},
		Links: []*tracepb.Span_Link{{TraceId: traceB[:], SpanId: []byte{0, 0, 0, 0, 0, 0, 0, 9}, TraceState: "k=v", Flags: 1 | hasRemote | isRemote,
			Attributes: []*commonpb.KeyValue{{Key: "n", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 1}}}}, DroppedAttributesCount: 4}},
		Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "boom"},
	}
	if got := onlySpan(t, exportOne(t, nil, ro(s)...)); !proto.Equal(got, want) {
		t.Errorf("span\n got %v\nwant %v", got, want)
	}
	// A root span: no parent id, the "is remote" bit known and clear; an
	// unended span's end time (zero) is 0, not a wrapped negative number.
	root := stub("root", 3)
	root.EndTime = time.Time{}
	root.Status = sdktrace.Status{Code: codes.Ok}
	got := onlySpan(t, exportOne(t, nil, ro(root)...))
	if got.ParentSpanId != nil || got.Flags != 1|hasRemote || got.EndTimeUnixNano != 0 || got.Status.GetCode() != tracepb.Status_STATUS_CODE_OK || got.Kind != tracepb.Span_SPAN_KIND_UNSPECIFIED {
		t.Errorf("root span %v", got)
	}
}

// TestExportGrouping: spans are grouped by resource (attributes and schema
// URL), then by scope, in the order each first appears.
func TestExportGrouping(t *testing.T) {
	r1 := resource.NewSchemaless(attribute.String("service.name", "one"))
	r2 := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "two"))
	r1s := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0", attribute.String("service.name", "one"))
	sA := instrumentation.Scope{Name: "a", Version: "1.0", SchemaURL: "https://s", Attributes: attribute.NewSet(attribute.String("x", "y"))}
	sB := instrumentation.Scope{Name: "b"}
	mk := func(name string, r *resource.Resource, sc instrumentation.Scope) tracetest.SpanStub {
		s := stub(name, byte(len(name)))
		s.Resource, s.InstrumentationScope = r, sc
		return s
	}
	got := exportOne(t, nil, ro(mk("1", r1, sA), mk("22", r2, sA), mk("333", r1, sB), mk("4444", r1, sA), mk("55555", r2, sA), mk("666666", r1s, sB))...).rs
	type group struct {
		service, schema, scope string
		spans                  []string
	}
	var flat []group
	for _, rs := range got {
		for _, ss := range rs.ScopeSpans {
			g := group{service: rs.Resource.Attributes[0].Value.GetStringValue(), schema: rs.SchemaUrl, scope: ss.Scope.GetName()}
			for _, s := range ss.Spans {
				g.spans = append(g.spans, s.Name)
			}
			flat = append(flat, g)
		}
	}
	want := []group{
		{"one", "", "a", []string{"1", "4444"}},
		{"one", "", "b", []string{"333"}},
		{"two", "https://opentelemetry.io/schemas/1.26.0", "a", []string{"22", "55555"}},
		{"one", "https://opentelemetry.io/schemas/1.26.0", "b", []string{"666666"}},
	}
	if len(got) != 3 || len(flat) != len(want) {
		t.Fatalf("groups %+v, want %+v", flat, want)
	}
	for i := range want {
		if flat[i].service != want[i].service || flat[i].schema != want[i].schema || flat[i].scope != want[i].scope || strings.Join(flat[i].spans, ",") != strings.Join(want[i].spans, ",") {
			t.Errorf("group %d = %+v, want %+v", i, flat[i], want[i])
		}
	}
	sc := got[0].ScopeSpans[0]
	if sc.SchemaUrl != "https://s" || sc.Scope.Version != "1.0" || len(sc.Scope.Attributes) != 1 || sc.Scope.Attributes[0].Key != "x" {
		t.Errorf("scope a: %v", sc)
	}
}

// TestExportRetries: 429, 502, 503 and 504 are retried until the
// collector takes the spans; other failures are not.
func TestExportRetries(t *testing.T) {
	for _, code := range []int{429, 502, 503, 504} {
		c := newCollector(t, func(n int, w http.ResponseWriter) {
			if n < 2 {
				w.WriteHeader(code)
			}
		})
		err := testExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL}).ExportSpans(t.Context(), ro(stub("a", 1)))
		if n := len(c.requests()); err != nil || n != 3 {
			t.Errorf("%d twice then 200: %v after %d requests, want success after 3", code, err, n)
		}
	}
	c := newCollector(t, func(n int, w http.ResponseWriter) {
		http.Error(w, "quota exceeded\nsecond line", http.StatusBadRequest)
	})
	err := testExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL}).ExportSpans(t.Context(), ro(stub("a", 1)))
	if n := len(c.requests()); err == nil || n != 1 || err.Error() != "OTLP trace export to "+c.URL+"/v1/traces: 400 Bad Request: quota exceeded" {
		t.Errorf("400: %v after %d requests, want one request and the collector's first line", err, n)
	}
}

// TestExportRetryAfter: a Retry-After is waited for; one that would end
// after the export's timeout ends the export at once.
func TestExportRetryAfter(t *testing.T) {
	c := newCollector(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		}
	})
	if err := testExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL}).ExportSpans(t.Context(), ro(stub("a", 1))); err != nil {
		t.Fatal(err)
	}
	got := c.requests()
	if len(got) != 2 || got[1].at.Sub(got[0].at) < 900*time.Millisecond {
		t.Errorf("%d requests, the retry %v after the first; want it after Retry-After: 1", len(got), got[len(got)-1].at.Sub(got[0].at))
	}
	c = newCollector(t, func(n int, w http.ResponseWriter) {
		w.Header().Set("Retry-After", "30")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	start := time.Now()
	err := testExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL, "OTEL_EXPORTER_OTLP_TIMEOUT": "5000"}).ExportSpans(t.Context(), ro(stub("a", 1)))
	if len(c.requests()) != 1 || err == nil || !strings.Contains(err.Error(), "503 Service Unavailable (no time left to retry after 30s)") || time.Since(start) > 3*time.Second {
		t.Errorf("Retry-After beyond the timeout: %v after %d requests and %v", err, len(c.requests()), time.Since(start))
	}
}

// TestExportRetriesBoundedByTimeout: a collector that never recovers costs
// at most about the timeout (1 s here).
func TestExportRetriesBoundedByTimeout(t *testing.T) {
	c := newCollector(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusBadGateway) })
	start := time.Now()
	err := testExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL, "OTEL_EXPORTER_OTLP_TIMEOUT": "1000"}).ExportSpans(t.Context(), ro(stub("a", 1)))
	if err == nil || !strings.Contains(err.Error(), "502 Bad Gateway") || len(c.requests()) < 2 || time.Since(start) > 3*time.Second {
		t.Errorf("502 for ever with a 1 s timeout: %v after %d requests and %v", err, len(c.requests()), time.Since(start))
	}
}

// TestExportRetriesBoundedWithoutTimeout: with OTEL_EXPORTER_OTLP_TIMEOUT=0
// the retries still end (after a minute; 1 s here).
func TestExportRetriesBoundedWithoutTimeout(t *testing.T) {
	c := newCollector(t, func(n int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) })
	e := testExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL, "OTEL_EXPORTER_OTLP_TIMEOUT": "0"})
	e.noTimeoutBudget = time.Second
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Second) // not to hang if the bound is gone
	defer cancel()
	start := time.Now()
	err := e.ExportSpans(ctx, ro(stub("a", 1)))
	if err == nil || !strings.Contains(err.Error(), "no time left to retry") || len(c.requests()) < 2 || time.Since(start) > 3*time.Second {
		t.Errorf("503 for ever without a timeout: %v after %d requests and %v", err, len(c.requests()), time.Since(start))
	}
}

// TestExportRetriesReset: a connection the collector resets is retried.
func TestExportRetriesReset(t *testing.T) {
	c := newCollector(t, func(n int, w http.ResponseWriter) {
		if n > 0 {
			return
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		conn.(*net.TCPConn).SetLinger(0) // close with a RST
		conn.Close()
	})
	if err := testExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL}).ExportSpans(t.Context(), ro(stub("a", 1))); err != nil || len(c.requests()) != 2 {
		t.Errorf("reset once: %v after %d requests, want success after 2", err, len(c.requests()))
	}
}

// TestExportPartialSuccess: the collector's partial_success is reported;
// an empty one is a success; a protobuf google.rpc.Status on failure gives
// the error its message.
func TestExportPartialSuccess(t *testing.T) {
	var partial []byte
	partial = protowire.AppendTag(partial, 1, protowire.VarintType)
	partial = protowire.AppendVarint(partial, 3)
	partial = protowire.AppendTag(partial, 2, protowire.BytesType)
	partial = protowire.AppendString(partial, "spans too old")
	var resp []byte
	resp = protowire.AppendTag(resp, 1, protowire.BytesType)
	resp = protowire.AppendBytes(resp, partial)
	var status []byte
	status = protowire.AppendTag(status, 1, protowire.VarintType)
	status = protowire.AppendVarint(status, 3)
	status = protowire.AppendTag(status, 2, protowire.BytesType)
	status = protowire.AppendString(status, "malformed span")
	for _, c := range []struct {
		name   string
		code   int
		body   []byte
		ctype  string
		errMsg string
	}{
		{"rejected", 200, resp, "application/x-protobuf", "OTLP trace export: the collector rejected 3 spans: spans too old"},
		{"empty partial success", 200, protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), nil), "application/x-protobuf", ""},
		{"not protobuf", 200, []byte("{}"), "application/json", ""},
		{"garbage", 200, []byte{0xff}, "application/x-protobuf", "not an ExportTraceServiceResponse"},
		{"status", 400, status, "application/x-protobuf", "400 Bad Request: malformed span"},
	} {
		col := newCollector(t, func(n int, w http.ResponseWriter) {
			w.Header().Set("Content-Type", c.ctype)
			w.WriteHeader(c.code)
			w.Write(c.body)
		})
		err := testExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.URL}).ExportSpans(t.Context(), ro(stub("a", 1)))
		if (err == nil) != (c.errMsg == "") || (err != nil && !strings.Contains(err.Error(), c.errMsg)) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.errMsg)
		}
	}
}

// TestExportLimits: a batch above the request limit is refused before any
// request; a response above MaxResponseBytes is an error.
func TestExportLimits(t *testing.T) {
	c := newCollector(t, nil)
	e := testExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL})
	e.maxExportBytes = 100
	s := stub("big", 1)
	s.Attributes = []attribute.KeyValue{attribute.String("x", strings.Repeat("x", 100))}
	if err := e.ExportSpans(t.Context(), ro(s)); err == nil || !strings.Contains(err.Error(), "more than the 100 a request may carry") || len(c.requests()) != 0 {
		t.Errorf("oversized batch: %v, %d requests", err, len(c.requests()))
	}
	c = newCollector(t, func(n int, w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(make([]byte, MaxResponseBytes+1))
	})
	err := testExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL}).ExportSpans(t.Context(), ro(stub("a", 1)))
	if err == nil || !strings.Contains(err.Error(), "reading the response: more than 4194304 bytes") {
		t.Errorf("oversized response: %v", err)
	}
}

// TestExportServerErrorSurfaces: through Setup, a collector's failure
// reaches onError as one line naming the endpoint and the status.
func TestExportServerErrorSurfaces(t *testing.T) {
	c := newCollector(t, func(n int, w http.ResponseWriter) { http.Error(w, "no such tenant", http.StatusUnauthorized) })
	old := otel.GetTracerProvider()
	t.Cleanup(func() { otel.SetTracerProvider(old) })
	errs := make(chan error, 10)
	shutdown, err := Setup(t.Context(), envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL}), "v", func(err error) { errs <- err })
	if err != nil {
		t.Fatal(err)
	}
	_, span := Start(t.Context(), "run")
	span.End()
	if err := shutdown(t.Context()); err != nil {
		t.Logf("shutdown: %v", err)
	}
	select {
	case err := <-errs:
		if want := "OTLP trace export to " + c.URL + "/v1/traces: 401 Unauthorized: no such tenant"; err.Error() != want {
			t.Errorf("onError got %q, want %q", err, want)
		}
	default:
		t.Errorf("a 401 from the collector did not reach onError")
	}
}

// TestSetupConfigError: a variable the exporter cannot honour is Setup's
// error; nothing is installed and no goroutine started.
func TestSetupConfigError(t *testing.T) {
	before := otel.GetTracerProvider()
	g := runtime.NumGoroutine()
	shutdown, err := Setup(t.Context(), envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_COMPRESSION": "br"}), "v", nil)
	if shutdown != nil || err == nil || err.Error() != `OTEL_EXPORTER_OTLP_COMPRESSION "br": want gzip or none` {
		t.Errorf("Setup = %v, %v", shutdown != nil, err)
	}
	if otel.GetTracerProvider() != before || runtime.NumGoroutine() != g {
		t.Errorf("Setup with a bad variable installed a provider or started goroutines")
	}
}

// TestShutdown: Shutdown waits for the export in flight, then refuses
// exports; when its context ends first it cancels the export.
func TestShutdown(t *testing.T) {
	release := make(chan struct{})
	c := newCollector(t, func(n int, w http.ResponseWriter) {
		if n == 0 {
			<-release
		}
	})
	e := testExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.URL})
	exported := make(chan error, 1)
	go func() { exported <- e.ExportSpans(context.Background(), ro(stub("a", 1))) }()
	for len(c.requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	shut := make(chan error, 1)
	go func() { shut <- e.Shutdown(context.Background()) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) with an export in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-exported; err != nil {
		t.Errorf("the export in flight: %v", err)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := e.ExportSpans(t.Context(), ro(stub("b", 2))); !errors.Is(err, ErrExporterShutDown) || len(c.requests()) != 1 {
		t.Errorf("export after Shutdown: %v, %d requests", err, len(c.requests()))
	}

	stuck := make(chan struct{})
	defer close(stuck)
	c2 := newCollector(t, func(n int, w http.ResponseWriter) { <-stuck })
	e2 := testExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c2.URL})
	go func() { exported <- e2.ExportSpans(context.Background(), ro(stub("a", 1))) }()
	for len(c2.requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := e2.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown past its deadline: %v", err)
	}
	select {
	case err := <-exported:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the cancelled export: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("Shutdown's deadline did not cancel the export in flight")
	}
}
