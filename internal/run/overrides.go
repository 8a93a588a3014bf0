package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fullsend-ai/fullsend/internal/resolve"
)

// PlannedOverride is one skill file override (harness.SkillOverride) with
// its host paths: the skill's verified directory and the override file
// ("" = delete Path).
type PlannedOverride struct {
	SkillDir string `json:"skill_dir"`
	Path     string `json:"path"`
	Source   string `json:"source,omitempty"`
}

// planOverrides maps each override to the skill's host directory: the
// loaded harness and the resolved one list skills, and overrides, in the
// same order.
func (p *Plan) planOverrides(res *resolve.Result) {
	if res.Loaded == nil {
		return
	}
	loaded, h := res.Loaded, res.Harness
	for i, o := range loaded.SkillOverrides {
		for j, s := range loaded.Skills {
			if s == o.Skill && j < len(h.Skills) && i < len(h.SkillOverrides) {
				p.SkillOverrides = append(p.SkillOverrides, PlannedOverride{SkillDir: h.Skills[j], Path: o.Path, Source: h.SkillOverrides[i].Source})
				break
			}
		}
	}
}

// hasOverrides reports whether the skill at hostDir has overrides.
func (p *Plan) hasOverrides(hostDir string) bool {
	for _, o := range p.SkillOverrides {
		if o.SkillDir == hostDir {
			return true
		}
	}
	return false
}

// applyOverrides applies the overrides of the skill at hostDir to its
// staged copy dst: each Path must be a regular file of the verified tree
// (a typo fails the run rather than adding a file); a Source replaces it
// (read through the fullsend dir like every staged file), none deletes it.
func (p *Plan) applyOverrides(roots []string, hostDir, dst string) error {
	for _, o := range p.SkillOverrides {
		if o.SkillDir != hostDir {
			continue
		}
		target := filepath.Join(dst, filepath.FromSlash(o.Path))
		st, err := os.Lstat(target)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("skill override %s: no such file in the verified skill", o.Path)
		}
		if err != nil {
			return fmt.Errorf("skill override %s: %w", o.Path, err)
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("skill override %s: not a regular file of the skill", o.Path)
		}
		if err := os.Remove(target); err != nil {
			return fmt.Errorf("skill override %s: %w", o.Path, err)
		}
		if o.Source == "" {
			continue
		}
		if err := stageFile(roots, o.Source, target); err != nil {
			return fmt.Errorf("skill override %s (%s): %w", o.Path, o.Source, err)
		}
	}
	return nil
}
