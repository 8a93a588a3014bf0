package trace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every fullsend span.
const ScopeName = "github.com/fullsend-ai/fullsend"

// ShutdownTimeout bounds the final flush of buffered spans.
const ShutdownTimeout = 5 * time.Second

// CaptureContentEnv is the standard opt-in for prompt and completion text.
const CaptureContentEnv = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// Span is an OpenTelemetry span (an alias, so callers need not import the
// API package).
type Span = oteltrace.Span

var captureContent atomic.Bool

// Enabled reports whether the OTEL_* variables ask for traces (see the
// package documentation); an error names a variable fullsend cannot honour.
func Enabled(getenv func(string) string) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	on := false
	if exp != "" {
		for _, e := range strings.Split(exp, ",") {
			switch e = strings.ToLower(strings.TrimSpace(e)); e {
			case "none":
				return false, nil
			case "otlp":
				on = true
			default:
				return false, fmt.Errorf("OTEL_TRACES_EXPORTER %q: fullsend exports traces over otlp only (or none)", exp)
			}
		}
	}
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
		on = true
	}
	if !on {
		return false, nil
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			if v != "http/protobuf" {
				return false, fmt.Errorf("%s %q: fullsend exports over http/protobuf only (an OTLP collector's port 4318)", k, v)
			}
			break // the traces-specific setting wins
		}
	}
	return true, nil
}

// Setup installs the global tracer provider when the environment asks for
// traces and returns the function that flushes and stops it (bounded by
// ShutdownTimeout). When tracing is off it installs nothing and returns a
// nil function. Export errors after Setup go to onError
// (the first one only: an unreachable collector would otherwise repeat it
// for every batch).
func Setup(ctx context.Context, getenv func(string) string, version string, onError func(error)) (func(context.Context) error, error) {
	on, err := Enabled(getenv)
	if err != nil || !on {
		return nil, err
	}
	exp, err := newOTLPExporter(getenv, version)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "fullsend"), attribute.String("service.version", version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the defaults
	)
	if err != nil && res == nil {
		return nil, fmt.Errorf("trace resource (OTEL_RESOURCE_ATTRIBUTES): %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	if onError != nil {
		var once atomic.Bool
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			if once.CompareAndSwap(false, true) {
				onError(err)
			}
		}))
	}
	otel.SetTracerProvider(tp)
	SetCaptureContent(strings.EqualFold(strings.TrimSpace(getenv(CaptureContentEnv)), "true"))
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, ShutdownTimeout)
		defer cancel()
		return tp.Shutdown(ctx)
	}, nil
}

// SetCaptureContent turns recording of prompt and completion text on or
// off (Setup sets it from CaptureContentEnv; tests set it directly).
func SetCaptureContent(on bool) { captureContent.Store(on) }

// CaptureContent reports whether prompt and completion text may be
// recorded (redacted by the caller first).
func CaptureContent() bool { return captureContent.Load() }

// Start starts a span named name as a child of the span in ctx (a root
// when there is none). With tracing off it returns ctx's no-op span.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, Span) {
	t := otel.GetTracerProvider().Tracer(ScopeName)
	if len(attrs) == 0 {
		return t.Start(ctx, name)
	}
	return t.Start(ctx, name, oteltrace.WithAttributes(attrs...))
}

// FromContext returns the span in ctx (a no-op span when there is none).
func FromContext(ctx context.Context) Span { return oteltrace.SpanFromContext(ctx) }

// End ends span, marking it failed with err's message when err is not nil.
func End(span Span, err error) {
	Fail(span, err)
	span.End()
}

// Fail marks span failed with err (nothing when err is nil). The message
// is the error's first line, bounded, as in the rest of fullsend's output.
func Fail(span Span, err error) {
	if err == nil || !span.IsRecording() {
		return
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if len(msg) > 1000 {
		msg = msg[:1000] + "…"
	}
	span.SetStatus(codes.Error, msg)
	kind := "error"
	if errors.Is(err, context.Canceled) {
		kind = "canceled"
	} else if errors.Is(err, context.DeadlineExceeded) {
		kind = "timeout"
	}
	span.SetAttributes(attribute.String("error.type", kind))
}

// Traceparent is the W3C traceparent value of the span in ctx, or "" when
// there is no valid (exported) span: the TRACEPARENT handed to the agent.
func Traceparent(ctx context.Context) string {
	sc := oteltrace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c.Get("traceparent")
}

// WithParent returns ctx carrying the remote parent named by a W3C
// traceparent value (fullsend's own TRACEPARENT, set by a CI system whose
// trace the run should join); ctx unchanged when tp is empty or malformed.
func WithParent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
}

// With returns ctx carrying span (the span of one context moved onto
// another, e.g. onto a context with a different deadline).
func With(ctx context.Context, span Span) context.Context {
	return oteltrace.ContextWithSpan(ctx, span)
}

// StartAt is Start for a span reported after the fact: its start is at.
func StartAt(ctx context.Context, name string, at time.Time, attrs ...attribute.KeyValue) (context.Context, Span) {
	return otel.GetTracerProvider().Tracer(ScopeName).Start(ctx, name, oteltrace.WithTimestamp(at), oteltrace.WithAttributes(attrs...))
}
