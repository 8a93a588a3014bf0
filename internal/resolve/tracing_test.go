package resolve

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fullsend-ai/fullsend/internal/spantest"
)

// TestResolveSpans: a resolution is one "resolve" span with one
// "resolve.resource" child per remote resource: its canonical URL, sha256,
// bytes and source (forge when fetched, cache when warm). Not parallel:
// it installs the global tracer provider.
func TestResolveSpans(t *testing.T) {
	exp := spantest.Record(t)

	w, g := buildGraphRepo(t, func(r *repo) *world { return newWorld(t, r) }, "")
	o := w.opts()
	o.Yes = true
	for _, wantSource := range []string{"forge", "cache"} {
		exp.Reset()
		res, err := Resolve(context.Background(), g.harnessURL, o)
		if err != nil {
			t.Fatal(err)
		}
		var root tracetest.SpanStub
		var resources tracetest.SpanStubs
		for _, s := range exp.GetSpans() {
			switch s.Name {
			case "resolve":
				root = s
			case "resolve.resource":
				resources = append(resources, s)
			}
		}
		if root.Name == "" {
			t.Fatalf("no resolve span")
		}
		if len(resources) != 7 { // the harness and its 6 resources
			t.Fatalf("%s: %d resource spans, want 7", wantSource, len(resources))
		}
		get := func(s tracetest.SpanStub, k string) attribute.Value {
			for _, kv := range s.Attributes {
				if string(kv.Key) == k {
					return kv.Value
				}
			}
			return attribute.Value{}
		}
		for _, s := range resources {
			if s.Parent.SpanID() != root.SpanContext.SpanID() {
				t.Errorf("resource span %s is not a child of resolve", get(s, "url.full").AsString())
			}
			u := get(s, "url.full").AsString()
			n := nodeByURL(res.Graph, u)
			sum := string(res.SHA256)
			if n != nil {
				sum = string(n.SHA256)
			} else if u != res.Graph.Root.URL {
				t.Errorf("resource span for %q, which is not in the graph", u)
			}
			if got := get(s, "fullsend.resource.sha256").AsString(); got != sum {
				t.Errorf("%s: sha256 %q, want %q", u, got, sum)
			}
			if got := get(s, "fullsend.resource.source").AsString(); got != wantSource {
				t.Errorf("%s: source %q, want %q", u, got, wantSource)
			}
			if get(s, "fullsend.resource.bytes").AsInt64() <= 0 {
				t.Errorf("%s: bytes %v", u, get(s, "fullsend.resource.bytes").AsInt64())
			}
		}
	}
}
