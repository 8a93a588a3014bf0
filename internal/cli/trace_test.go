//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
	"github.com/fullsend-ai/fullsend/internal/spantest"
	"github.com/fullsend-ai/fullsend/internal/trace"
)

// These tests install an in-memory span exporter as the global tracer
// provider (what trace.Setup does with an OTLP exporter) and check the
// span tree of whole `fullsend run`s. They change process-wide state: no
// t.Parallel.

func memSpans(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	exp := spantest.Record(t)
	t.Cleanup(func() {
		trace.SetCaptureContent(false)
	})
	return exp
}

type spanTree struct {
	t     *testing.T
	spans tracetest.SpanStubs
}

// one returns the only span called name (failing the test otherwise).
func (s spanTree) one(name string) tracetest.SpanStub {
	s.t.Helper()
	var found []tracetest.SpanStub
	for _, sp := range s.spans {
		if sp.Name == name {
			found = append(found, sp)
		}
	}
	if len(found) != 1 {
		s.t.Fatalf("%d spans named %q, want 1; spans: %s", len(found), name, s.names())
	}
	return found[0]
}

func (s spanTree) all(prefix string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, sp := range s.spans {
		if strings.HasPrefix(sp.Name, prefix) {
			out = append(out, sp)
		}
	}
	return out
}

func (s spanTree) names() string {
	var n []string
	for _, sp := range s.spans {
		n = append(n, sp.Name)
	}
	return strings.Join(n, ", ")
}

func attr(sp tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, kv := range sp.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func wantAttr(t *testing.T, sp tracetest.SpanStub, key string, want any) {
	t.Helper()
	v, ok := attr(sp, key)
	if !ok {
		t.Errorf("span %q lacks %s", sp.Name, key)
		return
	}
	if got := v.AsInterface(); got != want {
		t.Errorf("span %q: %s = %v (%T), want %v (%T)", sp.Name, key, got, got, want, want)
	}
}

func childOf(t *testing.T, sp, parent tracetest.SpanStub) {
	t.Helper()
	if sp.Parent.SpanID() != parent.SpanContext.SpanID() || sp.SpanContext.TraceID() != parent.SpanContext.TraceID() {
		t.Errorf("span %q is not a child of %q", sp.Name, parent.Name)
	}
}

// runHelloScript runs the hello harness, from a new workspace, with the
// script runtime's steps (YAML) and returns the run's report. A run that
// does not exit 0 fails the test.
func runHelloScript(t *testing.T, steps string) *runpkg.Report {
	t.Helper()
	script := filepath.Join(t.TempDir(), "hello.script.yaml")
	if err := os.WriteFile(script, []byte(steps), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	code, out, errs := runCLI(t, "--workspace", ws, "run", "--target-repo", "none", "--script", script, helloHarness)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	return onlyRun(t, ws)
}

// TestRunTraceScript: a script-runtime run of the hello example is one
// trace: the run root, resolve, every phase as a child of the run with its
// attributes, the sandbox commands below their phases, and the agent
// iteration as an invoke_agent span whose context reached the sandbox as
// TRACEPARENT.
func TestRunTraceScript(t *testing.T) {
	needLocalSandbox(t)
	exp := memSpans(t)
	rep := runHelloScript(t, `steps:
  - exec:
      cmd: 'printf "%s" "$TRACEPARENT" > /sandbox/output/traceparent.txt'
  - exec:
      cmd: 'printf "Hello, %s!" "$GREETING_NAME"'
      save: GREETING
  - write_result:
      value:
        greeting: "${GREETING}"
        name: "${GREETING_NAME}"
`)
	s := spanTree{t, exp.GetSpans()}
	root := s.one("run")
	if root.Parent.IsValid() {
		t.Errorf("run span has a parent")
	}
	wantAttr(t, root, "fullsend.run.id", rep.RunID)
	wantAttr(t, root, "fullsend.run.status", "succeeded")
	wantAttr(t, root, "fullsend.runtime", "script")
	wantAttr(t, root, "gen_ai.agent.name", "hello")
	wantAttr(t, root, "fullsend.harness.sha256", string(rep.Harness.SHA256))
	childOf(t, s.one("resolve"), root)
	for _, name := range []string{"stage", "host_scan", "provision", "layout", "bootstrap", "scan_context", "invoke_agent hello", "download", "validate", "teardown"} {
		childOf(t, s.one(name), root)
	}
	hs := s.one("host_scan")
	if _, ok := attr(hs, "fullsend.scan.findings.critical"); !ok {
		t.Errorf("host_scan span lacks findings by severity: %v", hs.Attributes)
	}
	wantAttr(t, hs, "fullsend.scan.blocked", false)
	prov := s.one("provision")
	wantAttr(t, prov, "fullsend.sandbox.backend", "local")
	wantAttr(t, prov, "fullsend.sandbox.limits.memory_bytes", rep.Sandbox.Limits.MemoryBytes)
	agent := s.one("invoke_agent hello")
	wantAttr(t, agent, "gen_ai.operation.name", "invoke_agent")
	wantAttr(t, agent, "fullsend.iteration", int64(1))
	// Sandbox commands hang below the phase that ran them.
	var underAgent, underScan int
	for _, ex := range s.all("sandbox.exec") {
		switch ex.Parent.SpanID() {
		case agent.SpanContext.SpanID():
			underAgent++
		case s.one("scan_context").SpanContext.SpanID():
			underScan++
		}
	}
	if underAgent == 0 || underScan == 0 {
		t.Errorf("sandbox.exec spans: %d under the agent, %d under scan_context; want both > 0 (spans: %s)", underAgent, underScan, s.names())
	}
	for _, sp := range s.spans {
		if sp.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Errorf("span %q is in another trace", sp.Name)
		}
	}
	tp, err := os.ReadFile(filepath.Join(rep.Dir(), "output", "traceparent.txt"))
	want := "00-" + agent.SpanContext.TraceID().String() + "-" + agent.SpanContext.SpanID().String() + "-01"
	if err != nil || string(tp) != want {
		t.Errorf("TRACEPARENT in the sandbox = %q (%v), want %q", tp, err, want)
	}
}

// TestRunTraceOffNoTraceparent: with no tracer provider installed (tracing
// off) the agent gets no TRACEPARENT and nothing is recorded.
func TestRunTraceOffNoTraceparent(t *testing.T) {
	needLocalSandbox(t)
	rep := runHelloScript(t, `steps:
  - exec:
      cmd: 'if env | grep -q ^TRACEPARENT=; then echo set; else echo unset; fi > /sandbox/output/traceparent.txt'
  - write_result:
      value: {greeting: "Hello, x!", name: x}
`)
	tp, err := os.ReadFile(filepath.Join(rep.Dir(), "output", "traceparent.txt"))
	if err != nil || string(tp) != "unset\n" {
		t.Errorf("TRACEPARENT with tracing off = %q (%v), want unset", tp, err)
	}
}

// TestRunTraceNative: a native run against the fake model server: chat
// spans (GenAI attributes, token usage) and execute_tool spans below the
// invoke_agent span; prompt text only with the capture opt-in, and then
// never the model key.
func TestRunTraceNative(t *testing.T) {
	needLocalSandbox(t)
	exp := memSpans(t)
	trace.SetCaptureContent(true)
	srv := modeltest.New(t, model.APIOpenAI,
		modeltest.Call("c1", native.ToolBash, map[string]string{"command": "echo \"name=$GREETING_NAME\""}),
		modeltest.Call("c2", native.ToolWriteFile, map[string]string{"path": resultInSbox, "content": helloResult}),
		// A model that repeats the key: captured text is redacted.
		modeltest.Say("Wrote the greeting. The key is sk-trace-test-secret-0123456789."),
	)
	setModelEnv(t, model.APIOpenAI, srv.URL+"/v1")
	t.Setenv(model.EnvAuth, "bearer")
	t.Setenv(model.EnvKeyEnv, "TRACE_TEST_KEY")
	t.Setenv("TRACE_TEST_KEY", "sk-trace-test-secret-0123456789")
	hello := helloAbs(t)
	ws := t.TempDir()
	code, out, errs := runCLIEnv(t, "--workspace", ws, "run", "--target-repo", "none", "--runtime", "native", hello)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	s := spanTree{t, exp.GetSpans()}
	agent := s.one("invoke_agent hello")
	wantAttr(t, agent, "fullsend.runtime", "native")
	wantAttr(t, agent, "fullsend.agent.tool_calls", int64(2))
	chats := s.all("chat ")
	if len(chats) != 3 {
		t.Fatalf("%d chat spans, want 3 (spans: %s)", len(chats), s.names())
	}
	var outTokens int64
	for _, c := range chats {
		childOf(t, c, agent)
		if c.Name != "chat test-model" {
			t.Errorf("chat span named %q", c.Name)
		}
		wantAttr(t, c, "gen_ai.operation.name", "chat")
		wantAttr(t, c, "gen_ai.provider.name", "openai")
		wantAttr(t, c, "gen_ai.request.model", "test-model")
		wantAttr(t, c, "server.address", "127.0.0.1")
		v, ok := attr(c, "gen_ai.usage.output_tokens")
		if !ok {
			t.Errorf("chat span lacks gen_ai.usage.output_tokens")
		}
		outTokens += v.AsInt64()
		in, _ := attr(c, "gen_ai.input.messages")
		if !strings.Contains(in.AsString(), "Run the hello agent") {
			t.Errorf("captured input messages lack the prompt: %.200s", in.AsString())
		}
	}
	if outTokens != onlyRun(t, ws).Events.OutputTokens || outTokens == 0 {
		t.Errorf("chat spans count %d output tokens, report %d", outTokens, onlyRun(t, ws).Events.OutputTokens)
	}
	bash := s.one("execute_tool " + native.ToolBash)
	childOf(t, bash, agent)
	wantAttr(t, bash, "gen_ai.tool.name", native.ToolBash)
	wantAttr(t, bash, "gen_ai.tool.call.id", "c1")
	wantAttr(t, bash, "fullsend.tool.outcome", "ok")
	if res, _ := attr(bash, "gen_ai.tool.call.result"); !strings.Contains(res.AsString(), "name=world") {
		t.Errorf("captured tool result = %q", res.AsString())
	}
	childOf(t, s.one("execute_tool "+native.ToolWriteFile), agent)
	for _, sp := range s.spans {
		for _, kv := range sp.Attributes {
			if strings.Contains(kv.Value.String(), "sk-trace-test-secret") {
				t.Errorf("span %q attribute %s carries the model key", sp.Name, kv.Key)
			}
		}
	}
}
