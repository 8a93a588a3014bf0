package native

import (
	"slices"

	"github.com/fullsend-ai/fullsend/internal/model"
)

// Snapshot is what the last Run offered the model, for the run report's
// capability snapshot. It never holds the API key.
type Snapshot struct {
	Tools            []string      `json:"tools"`
	SubagentProfiles []string      `json:"subagent_profiles"`
	Limits           Limits        `json:"limits"`
	Model            ModelEndpoint `json:"model"`
}

// ModelEndpoint is the model server a run talked to (no credential: only
// the name of the variable the key was read from).
type ModelEndpoint struct {
	API     string `json:"api"`
	BaseURL string `json:"base_url"`
	Model   string `json:"model"`
	Auth    string `json:"auth"`
	KeyEnv  string `json:"key_env,omitempty"`
}

// Snapshot returns the capabilities of the last Run (false before one).
func (r *Runtime) Snapshot() (Snapshot, bool) {
	if r.snap == nil {
		return Snapshot{}, false
	}
	s := *r.snap
	s.Tools = slices.Clone(s.Tools)
	s.SubagentProfiles = slices.Clone(s.SubagentProfiles)
	return s, true
}

// takeSnapshot records what loop l offers, with the endpoint redacted.
func (r *Runtime) takeSnapshot(l *loop, mc model.Config) {
	profiles := []string{}
	if slices.Contains(l.toolNames(), ToolDelegateTask) {
		profiles = slices.Clone(r.allowedProfiles())
	}
	r.snap = &Snapshot{Tools: l.toolNames(), SubagentProfiles: profiles, Limits: l.limits,
		Model: ModelEndpoint{API: string(mc.API), BaseURL: l.redact(mc.BaseURL), Model: mc.Model, Auth: string(mc.Auth), KeyEnv: mc.KeyEnv}}
}
