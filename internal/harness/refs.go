package harness

import (
	"fmt"
	"strings"
)

// ResourceKind is what a reference points at.
type ResourceKind int

// Resource kinds.
const (
	Agent ResourceKind = iota + 1
	Policy
	Skill
	Schema
	Profile
	Provider
	Plugin
	Script
	HostFile
	Doc
	// AgentInput is agent_input: a local directory copied into the
	// target directory.
	AgentInput
	// SkillOverrideFile is the local file of a skills entry's override.
	SkillOverrideFile
)

var kindNames = map[ResourceKind]string{
	Agent: "agent", Policy: "policy", Skill: "skill", Schema: "schema", Profile: "profile",
	Provider: "provider", Plugin: "plugin", Script: "script", HostFile: "host_file", Doc: "doc", AgentInput: "agent_input", SkillOverrideFile: "skill_override",
}

func (k ResourceKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "unknown"
}

// MarshalText renders the kind's name (JSON output).
func (k ResourceKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// IsDir reports whether resources of this kind are directories.
func (k ResourceKind) IsDir() bool { return k == Skill || k == Plugin || k == AgentInput }

// FieldRef is one reference field of a harness.
type FieldRef struct {
	Field      string // "agent", "skills[0]", "host_files[2].src", "forge.github.policy", …
	Value      string // as written (after remote-base absolutisation)
	Kind       ResourceKind
	Executable bool   // must be local: scripts, validation scripts, host files
	Optional   bool   // host_files optional: true
	Forge      string // overlay name when the field is inside an unapplied forge overlay
	Pos        Pos
}

// EnvExpanded reports whether the value holds ${VAR} references expanded at
// run time (host_files sources).
func (r FieldRef) EnvExpanded() bool { return strings.Contains(r.Value, "${") }

// Refs lists every reference field of h in a stable order: agent, doc,
// policy, openshell.profiles, providers, skills, plugins, validation_loop
// (schema, script), agent_input, pre_script, post_script, host_files; then the same for
// each unapplied forge overlay, sorted by name, with Field prefixed
// "forge.<name>.". Empty fields are omitted.
func (h *Harness) Refs() []FieldRef {
	out := h.refs("", "")
	for _, name := range h.ForgeNames() {
		o := h.Forge[name]
		prefix := "forge." + name + "."
		for _, r := range o.refs("", name) {
			r.Field = prefix + r.Field
			r.Pos = h.Pos(baseField(r.Field), r.Value)
			out = append(out, r)
		}
	}
	return out
}

// baseField strips list indexes and the host_files ".src" suffix, giving the
// key under which positions are recorded.
func baseField(f string) string {
	if i := strings.IndexByte(f, '['); i >= 0 {
		return f[:i]
	}
	return f
}

func (h *Harness) refs(prefix, forge string) []FieldRef {
	var out []FieldRef
	add := func(field, v string, k ResourceKind, exec bool) {
		if v == "" {
			return
		}
		out = append(out, FieldRef{Field: prefix + field, Value: v, Kind: k, Executable: exec, Forge: forge, Pos: h.Pos(baseField(field), v)})
	}
	list := func(field string, l []string, k ResourceKind) {
		for i, v := range l {
			out = append(out, FieldRef{Field: fmt.Sprintf("%s%s[%d]", prefix, field, i), Value: v, Kind: k, Forge: forge, Pos: h.Pos(field, v)})
		}
	}
	add("agent", h.Agent, Agent, false)
	add("doc", h.Doc, Doc, false)
	add("policy", h.Policy, Policy, false)
	list("openshell.profiles", h.Openshell.Profiles, Profile)
	list("providers", h.Providers, Provider)
	list("skills", h.Skills, Skill)
	list("plugins", h.Plugins, Plugin)
	for i, o := range h.SkillOverrides {
		if o.Source != "" {
			out = append(out, FieldRef{Field: fmt.Sprintf("%sskill_overrides[%d]", prefix, i), Value: o.Source, Kind: SkillOverrideFile,
				Executable: true, Forge: forge, Pos: h.Pos("skill_overrides", o.Source)})
		}
	}
	if vl := h.ValidationLoop; vl != nil {
		add("validation_loop.schema", vl.Schema, Schema, false)
		add("validation_loop.script", vl.Script, Script, true)
	}
	add("agent_input", h.AgentInput, AgentInput, true)
	add("pre_script", h.PreScript, Script, true)
	add("post_script", h.PostScript, Script, true)
	for i, hf := range h.HostFiles {
		out = append(out, FieldRef{
			Field: fmt.Sprintf("%shost_files[%d].src", prefix, i), Value: hf.Src, Kind: HostFile,
			Executable: true, Optional: hf.Optional, Forge: forge, Pos: h.Pos("host_files", hf.Src),
		})
	}
	return out
}
