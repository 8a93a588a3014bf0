package run

import (
	"bytes"
	"context"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/egress"
	"github.com/fullsend-ai/fullsend/internal/spantest"
	"github.com/fullsend-ai/fullsend/internal/trace"
)

// TestEgressEvents: when the run is traced, provision routes the egress
// proxy's decisions to the run span as "egress" events (host, port,
// decision, reason) and still passes denial lines to the configured log.
// Not parallel: it installs the global tracer provider.
func TestEgressEvents(t *testing.T) {
	exp := spantest.Record(t)

	ctx, span := trace.Start(context.Background(), "run")
	var log bytes.Buffer
	x := &execution{ctx: ctx, plan: &Plan{}}
	spec := sandbox.Spec{}
	spec.Network.Log = &log
	x.traceProvision(context.Background(), "local", &spec)
	rec, ok := spec.Network.Log.(egress.Recorder)
	if !ok {
		t.Fatalf("Network.Log is not an egress.Recorder when the run is traced")
	}
	rec.EgressDecision("api.example.com", 443, true, "allowed")
	rec.EgressDecision("169.254.169.254", 80, false, "cloud metadata endpoint")
	spec.Network.Log.Write([]byte("deny 169.254.169.254:80: cloud metadata endpoint\n"))
	span.End()
	if log.String() != "deny 169.254.169.254:80: cloud metadata endpoint\n" {
		t.Errorf("log = %q", log.String())
	}
	spans := exp.GetSpans()
	if len(spans) != 1 || len(spans[0].Events) != 2 {
		t.Fatalf("spans %+v", spans)
	}
	want := []map[string]string{
		{"server.address": "api.example.com", "server.port": "443", "fullsend.egress.decision": "allow", "fullsend.egress.reason": "allowed"},
		{"server.address": "169.254.169.254", "server.port": "80", "fullsend.egress.decision": "deny", "fullsend.egress.reason": "cloud metadata endpoint"},
	}
	for i, ev := range spans[0].Events {
		if ev.Name != "egress" {
			t.Errorf("event %q", ev.Name)
		}
		got := map[string]string{}
		for _, kv := range ev.Attributes {
			got[string(kv.Key)] = kv.Value.String()
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Errorf("event %d: %s = %q, want %q", i, k, got[k], v)
			}
		}
	}

	// Not traced: the log is left alone.
	spec = sandbox.Spec{}
	(&execution{ctx: context.Background(), plan: &Plan{}}).traceProvision(context.Background(), "local", &spec)
	if spec.Network.Log != nil {
		t.Errorf("Network.Log set for an untraced run")
	}
}
