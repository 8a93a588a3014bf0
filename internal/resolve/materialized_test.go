package resolve

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
)

// TestResultTwoMeanings: Result.Loaded keeps every reference as written
// and Result.Harness (a harness.Materialized) holds the local path of
// each; resolution never writes the local paths into the loaded harness.
func TestResultTwoMeanings(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"agents/a.md":         "agent\n",
		"policies/p.yaml":     "version: 1\n",
		"skills/s/SKILL.md":   skillMD(),
		"scripts/pre.sh":      "#!/bin/sh\n",
		"schemas/out.json":    "{}\n",
		"scripts/validate.sh": "#!/bin/sh\n",
		"harness/h.yaml": "agent: agents/a.md\npolicy: policies/p.yaml\nskills: [skills/s]\npre_script: scripts/pre.sh\n" +
			"validation_loop:\n  script: scripts/validate.sh\n  schema: schemas/out.json\n  max_iterations: 2\n",
	})
	res, err := Resolve(context.Background(), filepath.Join(dir, "harness/h.yaml"), localOpts(t, config.Default()))
	if err != nil {
		t.Fatal(err)
	}
	l, m := res.Loaded, res.Harness
	for _, c := range []struct{ field, written, local, rel string }{
		{"agent", l.Agent, m.Agent, "agents/a.md"},
		{"policy", l.Policy, m.Policy, "policies/p.yaml"},
		{"skills[0]", l.Skills[0], m.Skills[0], "skills/s"},
		{"pre_script", l.PreScript, m.PreScript, "scripts/pre.sh"},
		{"validation_loop.script", l.ValidationLoop.Script, m.ValidationLoop.Script, "scripts/validate.sh"},
		{"validation_loop.schema", l.ValidationLoop.Schema, m.ValidationLoop.Schema, "schemas/out.json"},
	} {
		if c.written != c.rel {
			t.Errorf("%s as loaded = %q, want %q as written", c.field, c.written, c.rel)
		}
		if want := filepath.Join(dir, c.rel); c.local != want {
			t.Errorf("%s materialized = %q, want %q", c.field, c.local, want)
		}
	}
	if m.ValidationLoop == l.ValidationLoop {
		t.Error("the materialized harness shares validation_loop with the loaded one")
	}
	if m.ValidationLoop.MaxIterations != 2 || m.EffectiveMaxRuntimeFetches() != l.EffectiveMaxRuntimeFetches() {
		t.Errorf("settings differ: max_iterations %d, max_runtime_fetches %d vs %d",
			m.ValidationLoop.MaxIterations, m.EffectiveMaxRuntimeFetches(), l.EffectiveMaxRuntimeFetches())
	}
}
