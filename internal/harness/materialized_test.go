package harness

import (
	"reflect"
	"slices"
	"testing"
)

// TestMaterializedIsItsOwnType: a materialized harness is neither
// assignable to nor from the harness as written, and has none of the
// methods that read references as written; its settings read the same.
func TestMaterializedIsItsOwnType(t *testing.T) {
	written, local := reflect.TypeFor[*Harness](), reflect.TypeFor[*Materialized]()
	if local.AssignableTo(written) || written.AssignableTo(local) {
		t.Fatal("*Materialized and *Harness are assignable to each other")
	}
	for _, name := range []string{"Refs", "Resolve", "OpenLocal", "Check", "Validate", "ApplyForge", "Pos", "ForgeNames"} {
		if _, ok := written.MethodByName(name); !ok {
			t.Fatalf("*Harness has no method %s: update this list", name)
		}
		if _, ok := local.MethodByName(name); ok {
			t.Errorf("*Materialized has %s, which reads references as written", name)
		}
	}

	h, err := Parse("h.yaml", []byte("agent: a.md\nmax_runtime_fetches: 3\nnative:\n  subagent_profiles: []\n  max_parallel_children: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := Materialize(h)
	if m.EffectiveMaxRuntimeFetches() != 3 || m.EffectiveMaxParallelChildren() != 2 ||
		!slices.Equal(m.EffectiveSubagentProfiles(), []string{}) {
		t.Errorf("settings: fetches %d, children %d, profiles %v",
			m.EffectiveMaxRuntimeFetches(), m.EffectiveMaxParallelChildren(), m.EffectiveSubagentProfiles())
	}
	d := Materialize(&Harness{})
	if d.EffectiveMaxRuntimeFetches() != DefaultMaxRuntimeFetches || d.EffectiveMaxParallelChildren() != DefaultMaxParallelChildren ||
		!slices.Equal(d.EffectiveSubagentProfiles(), DefaultSubagentProfiles) {
		t.Error("defaults differ from Harness's")
	}
}
