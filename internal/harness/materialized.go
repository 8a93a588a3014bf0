package harness

// Materialized is a harness whose every reference has been replaced by a
// local path: a cache path for a remote resource, the resolved path of a
// local one (${VAR} host files and missing optional ones stay as written).
// Package resolve produces it (resolve.Result.Harness); the runner and the
// runtimes consume it. It is a distinct type from Harness, the harness as
// written that load, validate, pin and vendor read and edit, so that the
// compiler refuses one where the other is meant: the reference fields
// (agent, doc, policy, openshell.profiles, providers, skills, plugins,
// skill_overrides[].source, validation_loop.schema and .script,
// agent_input, pre_script, post_script, host_files[].src) mean local
// paths here and references as written there.
//
// It carries none of Harness's methods that read references as written
// (Refs, Resolve, OpenLocal, Check, Validate, ApplyForge): only the
// settings below.
type Materialized Harness

// Materialize returns h as a Materialized harness, sharing its memory.
// Only package resolve calls it, once every reference field of h holds a
// local path.
func Materialize(h *Harness) *Materialized { return (*Materialized)(h) }

// EffectiveMaxRuntimeFetches is max_runtime_fetches, or its default.
func (m *Materialized) EffectiveMaxRuntimeFetches() int {
	return (*Harness)(m).EffectiveMaxRuntimeFetches()
}

// EffectiveSubagentProfiles is native.subagent_profiles, or its default.
func (m *Materialized) EffectiveSubagentProfiles() []string {
	return (*Harness)(m).EffectiveSubagentProfiles()
}

// EffectiveMaxParallelChildren is native.max_parallel_children, or its
// default.
func (m *Materialized) EffectiveMaxParallelChildren() int {
	return (*Harness)(m).EffectiveMaxParallelChildren()
}
