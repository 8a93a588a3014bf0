package trace

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		env     map[string]string
		on      bool
		errPart string
	}{
		{env: nil},
		{env: map[string]string{"OTEL_SERVICE_NAME": "x", CaptureContentEnv: "true"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, on: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, on: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}},
		{env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, errPart: `OTEL_TRACES_EXPORTER "zipkin"`},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, errPart: `OTEL_EXPORTER_OTLP_PROTOCOL "grpc"`},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, on: true},
	} {
		on, err := Enabled(envOf(c.env))
		if on != c.on || (err == nil) != (c.errPart == "") || (err != nil && !strings.Contains(err.Error(), c.errPart)) {
			t.Errorf("Enabled(%v) = %v, %v; want %v, error containing %q", c.env, on, err, c.on, c.errPart)
		}
	}
}

// TestSetupOff: with no OTEL_* variable Setup installs nothing: the global
// provider stays the no-op one and spans are not recorded.
func TestSetupOff(t *testing.T) {
	before := otel.GetTracerProvider()
	g := runtime.NumGoroutine()
	shutdown, err := Setup(context.Background(), envOf(nil), "test", nil)
	if n := runtime.NumGoroutine(); n != g {
		t.Errorf("Setup with tracing off: %d goroutines, %d before", n, g)
	}
	if err != nil || shutdown != nil {
		t.Fatalf("Setup = %v, %v; want nil, nil", shutdown != nil, err)
	}
	if otel.GetTracerProvider() != before {
		t.Errorf("Setup changed the global tracer provider with tracing off")
	}
	ctx, span := Start(context.Background(), "x")
	if span.IsRecording() || Traceparent(ctx) != "" {
		t.Errorf("a span was recorded with tracing off")
	}
}

// TestOTLPHTTPExport: with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a
// receiver on loopback, Setup exports over OTLP/HTTP: the receiver decodes
// the protobuf request and finds the spans, the service name and the
// parent link; shutdown flushes.
func TestOTLPHTTPExport(t *testing.T) {
	var mu sync.Mutex
	// TracesData has the wire shape of ExportTraceServiceRequest (field 1,
	// the repeated ResourceSpans) without the collector package's gRPC.
	var got []*tracepb.TracesData
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		req := &tracepb.TracesData{}
		if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, req)
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(nil) // an empty ExportTraceServiceResponse: everything taken
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "fullsend-test")
	old := otel.GetTracerProvider()
	t.Cleanup(func() { otel.SetTracerProvider(old); SetCaptureContent(false) })
	var exportErr error
	shutdown, err := Setup(context.Background(), func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, CaptureContentEnv: "true"}[k]
	}, "v-test", func(err error) { exportErr = err })
	if err != nil || shutdown == nil {
		t.Fatalf("Setup: %v", err)
	}
	if !CaptureContent() {
		t.Errorf("%s=true did not turn content capture on", CaptureContentEnv)
	}
	ctx, root := Start(context.Background(), "run")
	cctx, child := Start(ctx, "chat test-model")
	if tp := Traceparent(cctx); !strings.HasPrefix(tp, "00-"+root.SpanContext().TraceID().String()+"-"+child.SpanContext().SpanID().String()) {
		t.Errorf("Traceparent = %q", tp)
	}
	End(child, errors.New("boom\nsecond line"))
	End(root, nil)
	if err := shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if exportErr != nil {
		t.Fatalf("export error: %v", exportErr)
	}
	mu.Lock()
	defer mu.Unlock()
	names := map[string]string{} // name -> parent span id (hex)
	service := ""
	for _, req := range got {
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.Resource.Attributes {
				if kv.Key == "service.name" {
					service = kv.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names[s.Name] = string(s.ParentSpanId)
					if s.Name == "chat test-model" && (s.Status.GetMessage() != "boom") {
						t.Errorf("chat span status %q, want the error's first line", s.Status.GetMessage())
					}
				}
			}
		}
	}
	if len(paths) == 0 || paths[0] != "/v1/traces" {
		t.Errorf("receiver paths %v, want /v1/traces", paths)
	}
	if _, ok := names["run"]; !ok {
		t.Errorf("receiver got spans %v, want run", names)
	}
	rootID := root.SpanContext().SpanID()
	if p, ok := names["chat test-model"]; !ok || p != string(rootID[:]) {
		t.Errorf("chat span missing or not a child of run: %v", names)
	}
	if service != "fullsend-test" {
		t.Errorf("service.name = %q, want OTEL_SERVICE_NAME's", service)
	}
}

// TestWithParent: fullsend's own TRACEPARENT makes the root span a child of
// the caller's trace.
func TestWithParent(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	old := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(old) })
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	_, span := Start(WithParent(context.Background(), parent), "run")
	span.End()
	s := exp.GetSpans()
	if len(s) != 1 || s[0].SpanContext.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || s[0].Parent.SpanID().String() != "b7ad6b7169203331" {
		t.Errorf("spans %+v", s)
	}
	exp.Reset()
	_, span = Start(WithParent(context.Background(), "garbage"), "run")
	span.End()
	if s := exp.GetSpans(); len(s) != 1 || s[0].Parent.IsValid() {
		t.Errorf("a malformed TRACEPARENT gave the span a parent: %+v", s)
	}
}
