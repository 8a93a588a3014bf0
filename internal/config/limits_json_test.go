package config

import (
	"encoding/json"
	"testing"
)

// TestLimitsJSON: report.json, the plan and capabilities --json write the
// limits in force (sandbox.limits lowered by the harness: every field set,
// no wall time) byte for byte as before config.Limits became
// sandbox.Limits.
func TestLimitsJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		l    Limits
		want string
	}{
		{DefaultLimits(), `{"memory_bytes":4294967296,"pids":1024,"cpus":2,"tmp_bytes":1073741824,"workspace_bytes":10737418240,"output_bytes":67108864,"output_files":10000,"snapshot_bytes":1073741824}`},
		{DefaultLimits().Lower(Limits{MemoryBytes: 256 << 20, Pids: 64, CPUs: 0.5, OutputFiles: 100}), `{"memory_bytes":268435456,"pids":64,"cpus":0.5,"tmp_bytes":1073741824,"workspace_bytes":10737418240,"output_bytes":67108864,"output_files":100,"snapshot_bytes":1073741824}`},
	} {
		b, err := json.Marshal(c.l)
		if err != nil || string(b) != c.want {
			t.Errorf("json = %s, %v; want %s", b, err, c.want)
		}
	}
}
