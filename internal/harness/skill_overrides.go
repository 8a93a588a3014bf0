package harness

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// SkillOverride is one file-level override of a skill (upstream's object
// form of a skills entry):
//
//	skills:
//	  - skills/pr-review:
//	      sub-agents/x.md: overrides/x.md   # replace the file with a local one
//	      sub-agents/y.md: null             # delete it
//
// Overrides apply to the skill's tree after it is verified (its pin, its
// scan at resolve), in the run's staged copy; the result is what the host
// scan and the sandbox see. Source is a local file of the fullsend dir (a
// reference, checked like every other: no URL, no escape, no symlink out);
// "" deletes Path. Path must name a file of the verified tree.
type SkillOverride struct {
	Skill  string // the skills entry as written (after remote absolutisation)
	Path   string // slash-separated path inside the skill directory
	Source string // override file reference; "" = delete
}

// ErrRemoteOverrides: remote content may not override skill files.
var ErrRemoteOverrides = errors.New("skill file overrides are not allowed in remote content: an override is a local file of the fullsend dir (declare it in a local harness)")

// skillEntries decodes skills: each entry a reference, or a mapping of one
// reference to its overrides ({path: source|null}).
func (w *commonYAML) skillEntries(f *yamlx.Fields, key string, h *Harness) error {
	field, v := f.Field(key), f.Value(key)
	w.skills = nil
	h.SkillOverrides = nil
	if yamlx.IsNull(v) {
		h.mark(field, v)
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		return yamlx.Errorf(f.File, v, field, yamlx.ErrType, "expected a list of skill references")
	}
	h.mark(field, v)
	for i, e := range v.Content {
		ef := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case e.Kind == yaml.ScalarNode:
			if e.Value == "" || e.Tag == "!!null" {
				return yamlx.Errorf(f.File, e, ef, yamlx.ErrValue, "%v", ref.ErrEmpty)
			}
			w.skills = append(w.skills, e.Value)
			h.origin(field+"\x00"+e.Value, e)
		case e.Kind == yaml.MappingNode && len(e.Content) == 2:
			src, ov := e.Content[0], e.Content[1]
			if src.Kind != yaml.ScalarNode || src.Value == "" {
				return yamlx.Errorf(f.File, src, ef, yamlx.ErrValue, "want a skill reference as the key")
			}
			w.skills = append(w.skills, src.Value)
			h.origin(field+"\x00"+src.Value, src)
			pairs, err := yamlx.Pairs(f.File, ef+"."+src.Value, ov)
			if err != nil {
				return err
			}
			for _, kv := range pairs {
				pf := ef + "." + src.Value + "." + kv[0].Value
				if err := checkOverridePath(kv[0].Value); err != nil {
					return yamlx.Errorf(f.File, kv[0], pf, yamlx.ErrValue, "%v", err)
				}
				o := SkillOverride{Skill: src.Value, Path: kv[0].Value}
				if !yamlx.IsNull(kv[1]) {
					s, err := yamlx.String(f.File, pf, kv[1])
					if err != nil {
						return err
					}
					if s == "" {
						return yamlx.Errorf(f.File, kv[1], pf, yamlx.ErrValue, "want a local file, or null to delete the file")
					}
					if k, err := ref.Classify(s); err == nil && k == ref.Absolute {
						return yamlx.Errorf(f.File, kv[1], pf, yamlx.ErrValue, "%q: an override is a file of the fullsend dir, named by a relative path", s)
					}
					o.Source = s
					h.origin("skill_overrides\x00"+s, kv[1])
				}
				h.SkillOverrides = append(h.SkillOverrides, o)
			}
		default:
			return yamlx.Errorf(f.File, e, ef, yamlx.ErrValue, "want a skill reference, or {REFERENCE: {PATH: OVERRIDE|null, …}}")
		}
	}
	return nil
}

// checkOverridePath: a clean, relative, slash-separated path inside the
// skill directory.
func checkOverridePath(p string) error {
	switch {
	case p == "" || strings.ContainsAny(p, "\x00\\"):
		return fmt.Errorf("%q is not a path inside the skill", p)
	case path.IsAbs(p) || path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Errorf("%q is not a clean relative path inside the skill", p)
	}
	return nil
}

// mergeOverrides: a child that lists a skill (by name) replaces the
// base's entry for it, overrides included.
func mergeOverrides(base, child *Harness) []SkillOverride {
	names := map[string]bool{}
	for _, c := range child.Skills {
		names[SkillName(c)] = true
	}
	var out []SkillOverride
	for _, o := range base.SkillOverrides {
		if !names[SkillName(o.Skill)] {
			out = append(out, o)
		}
	}
	return append(out, child.SkillOverrides...)
}
