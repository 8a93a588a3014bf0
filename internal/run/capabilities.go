package run

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// CapabilitySnapshot is report.json's "capabilities": what the agent was
// given. Tools, subagent profiles, the loop limits and the model endpoint
// are known for runtimes that report them (runtime.OfferReporter: the
// native loop); the
// backend, the sandbox limits and the skills for every runtime.
type CapabilitySnapshot struct {
	Runtime          string           `json:"runtime"`
	Backend          string           `json:"backend"`
	Tools            []string         `json:"tools,omitempty"`
	SubagentProfiles []string         `json:"subagent_profiles,omitempty"`
	Limits           CapabilityLimits `json:"limits"`
	Model            any              `json:"model,omitempty"` // the runtime's model endpoint (runtime.Offered)
	Skills           []SkillDigest    `json:"skills"`
}

// CapabilityLimits are the bounds in force: the agent's wall time
// (timeout_minutes), the native loop's limits and the sandbox limits.
type CapabilityLimits struct {
	WallTimeMS int64         `json:"wall_time_ms"`
	Native     any           `json:"native,omitempty"` // the runtime's loop limits (runtime.Offered)
	Sandbox    config.Limits `json:"sandbox"`
}

// SkillDigest names an uploaded skill and the digest of its files:
// "sha256:" + the sha256 of the sorted lines "<sha256 of file>  <relative
// path>\n", one per regular file (symbolic links are not uploaded).
type SkillDigest struct {
	Name   string `json:"name"`
	Ref    string `json:"ref"`
	Remote bool   `json:"remote,omitempty"`
	Digest string `json:"digest"`
}

// baseCapabilities fills what the plan decides, for every runtime.
func (x *execution) baseCapabilities() error {
	p := x.plan
	c := &CapabilitySnapshot{Runtime: p.Runtime, Backend: p.Backend, Skills: []SkillDigest{},
		Limits: CapabilityLimits{WallTimeMS: p.WallTime.Milliseconds(), Sandbox: p.Limits}}
	for _, s := range p.Skills {
		d, err := dirDigest(s.HostDir)
		if err != nil {
			return fmt.Errorf("skill %s: %w", s.Name, err)
		}
		c.Skills = append(c.Skills, SkillDigest{Name: s.Name, Ref: s.Ref, Remote: s.Remote, Digest: d})
	}
	x.report.Capabilities = c
	return nil
}

// runtimeCapabilities adds what the runtime's last Run offered
// (runtime.OfferReporter: the native loop's tools, model and limits).
func (x *execution) runtimeCapabilities() {
	or, ok := x.rt.(runtime.OfferReporter)
	if !ok || x.report.Capabilities == nil {
		return
	}
	s, ok := or.Offered()
	if !ok {
		return
	}
	c := x.report.Capabilities
	c.Tools, c.SubagentProfiles, c.Model = s.Tools, s.SubagentProfiles, s.Model
	c.Limits.Native = s.Limits
}

// dirDigest is SkillDigest's digest of dir.
func dirDigest(dir string) (string, error) {
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, hex.EncodeToString(h.Sum(nil))+"  "+filepath.ToSlash(rel)+"\n")
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(lines)
	h := sha256.New()
	for _, l := range lines {
		io.WriteString(h, l)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
