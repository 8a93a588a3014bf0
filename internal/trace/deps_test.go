package trace

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoGRPC: the exporter must not bring google.golang.org/grpc (nor
// grpc-gateway or the collector package that carries them) back:
// through golang.org/x/net/trace it costs ~15 MB of binary, by defeating
// the linker's dead-method elimination, and registers /debug/requests on
// http.DefaultServeMux.
func TestNoGRPC(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(p, "grpc") || p == "golang.org/x/net/trace" || p == "html/template" ||
			strings.HasPrefix(p, "go.opentelemetry.io/proto/otlp/collector/") || strings.HasPrefix(p, "go.opentelemetry.io/otel/exporters/") {
			t.Errorf("internal/trace depends on %s", p)
		}
	}
}
