package resolve

import (
	"context"
	"os"

	"go.opentelemetry.io/otel/attribute"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/trace"
)

// Resolution is one "resolve" span (package trace) with one
// "resolve.resource" span per remote resource obtained: its canonical URL,
// sha256, type, bytes and where the bytes came from (cache, registry or
// forge, as in the audit log).

func endResolve(span trace.Span, res *Result, err error) {
	if span.IsRecording() && res != nil {
		n := 0
		if res.Graph != nil {
			n = len(res.Graph.Nodes)
		}
		span.SetAttributes(
			attribute.String("fullsend.harness.source", res.Source),
			attribute.String("fullsend.harness.sha256", string(res.SHA256)),
			attribute.Int("fullsend.resolve.resources", n),
		)
	}
	trace.End(span, err)
}

func startResource(ctx context.Context, w want) (context.Context, trace.Span) {
	return trace.Start(ctx, "resolve.resource",
		attribute.String("url.full", w.url),
		attribute.String("fullsend.resource.sha256", string(w.digest)),
		attribute.String("fullsend.resource.type", string(w.typ)),
		attribute.String("fullsend.resource.kind", w.kind),
	)
}

// traceSource records where a resource's bytes came from and how many
// there were on the resource span in ctx.
func traceSource(ctx context.Context, source string, size int64) {
	if span := trace.FromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.String("fullsend.resource.source", source), attribute.Int64("fullsend.resource.bytes", size))
	}
}

// cachedSize is the content bytes of a cache entry (its files, without
// the metadata); -1 when unknown.
func cachedSize(e cas.Entry) int64 {
	if e.Meta.Type == cas.TypeDirectory {
		var n int64
		for _, f := range e.Files {
			n += f.Size
		}
		return n
	}
	fi, err := os.Stat(e.ContentPath)
	if err != nil {
		return -1
	}
	return fi.Size()
}
