package spantest_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"

	"github.com/fullsend-ai/fullsend/internal/spantest"
)

// TestRecordAndRestore: spans ended during the test are recorded, and the
// previous global provider is back once the test ends.
func TestRecordAndRestore(t *testing.T) {
	before := otel.GetTracerProvider()
	t.Run("recording", func(t *testing.T) {
		exp := spantest.Record(t)
		_, span := otel.Tracer("spantest").Start(context.Background(), "one")
		span.End()
		if got := exp.GetSpans(); len(got) != 1 || got[0].Name != "one" {
			t.Fatalf("recorded %v, want the span \"one\"", got.Snapshots())
		}
	})
	if otel.GetTracerProvider() != before {
		t.Fatal("the previous tracer provider was not restored")
	}
}
