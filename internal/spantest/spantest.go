// Package spantest records the OpenTelemetry spans one test produces.
// Record installs a tracer provider that exports synchronously to memory as
// the global provider (which package trace starts its spans from) and puts
// the previous one back (and shuts the recording one down) when the test
// ends. Tests using it must not run in
// parallel with other tests that trace.
package spantest

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Record installs an in-memory span exporter for the rest of t and
// returns it; every span ended meanwhile is in its GetSpans.
func Record(t testing.TB) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	old := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() {
		otel.SetTracerProvider(old)
		tp.Shutdown(context.Background())
	})
	return exp
}
