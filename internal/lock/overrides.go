package lock

import (
	"fmt"
	"slices"
	"sort"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// Override is one file-level override of a skills entry (upstream's
// object form, package harness SkillOverride) as locked: the file at Path
// inside the verified skill is replaced by the local file Source, whose
// sha256 is SHA256, or, Deleted, removed. It is recorded under the skill's
// dependency, so the lock holds the whole set a run applies:
//
//	skills:
//	  - path: skills/pr-review
//	    sha256: "<tree hash>"
//	    type: directory
//	    files: […]
//	    overrides:                      # sorted by path; absent without overrides
//	      - path: sub-agents/x.md       # inside the skill
//	        source: overrides/x.md      # the override file (as in skill_overrides)
//	        sha256: "…"
//	      - path: sub-agents/y.md
//	        deleted: true
type Override struct {
	Path    string `yaml:"path"`
	Source  string `yaml:"source"`
	SHA256  string `yaml:"sha256"`
	Deleted bool   `yaml:"deleted"`
}

// String is the override as one phrase, for messages.
func (o Override) String() string {
	if o.Deleted {
		return o.Path + " deleted"
	}
	return fmt.Sprintf("%s replaced by %s (sha256 %s)", o.Path, o.Source, o.SHA256)
}

// CheckKey checks one overrides: entry once decoded.
func (o *Override) CheckKey(f *yamlx.Fields, key string) error {
	switch key {
	case "sha256":
		return digest(f, key, &o.SHA256)
	case "deleted":
		if !o.Deleted {
			return f.Errorf(key, yamlx.ErrValue, "deleted: false: leave the key out (an override replaces the file: source and sha256)")
		}
	case "":
		switch {
		case o.Path == "":
			return f.Errorf("", yamlx.ErrValue, "path is required")
		case o.Deleted && (o.Source != "" || o.SHA256 != ""):
			return f.Errorf("", yamlx.ErrValue, "a deleted file has no source or sha256")
		case !o.Deleted && (o.Source == "" || o.SHA256 == ""):
			return f.Errorf("", yamlx.ErrValue, "needs source and sha256, or deleted: true")
		}
	}
	return nil
}

// checkOverrides checks the decoded overrides: list of a dependency (key
// of f): a list, each path once.
func checkOverrides(f *yamlx.Fields, key string, ovs []Override) error {
	n := f.Value(key)
	if n.Kind != yaml.SequenceNode {
		return f.Errorf(key, yamlx.ErrType, "expected a list")
	}
	seen := map[string]bool{}
	for i, o := range ovs {
		if seen[o.Path] {
			return yamlx.Errorf(f.File, n.Content[i], fmt.Sprintf("%s[%d]", f.Field(key), i), yamlx.ErrValue, "path %q is listed twice", o.Path)
		}
		seen[o.Path] = true
	}
	return nil
}

// SortOverrides sorts ovs by path (the order they are written and
// compared in).
func SortOverrides(ovs []Override) {
	sort.Slice(ovs, func(i, j int) bool { return ovs[i].Path < ovs[j].Path })
}

// DiffOverrides describes the first difference between the override set
// a resolution applies (got) and the one locked (want), or "" when they
// are the same set.
func DiffOverrides(got, want []Override) string {
	g, w := slices.Clone(got), slices.Clone(want)
	SortOverrides(g)
	SortOverrides(w)
	locked := map[string]Override{}
	for _, o := range w {
		locked[o.Path] = o
	}
	var out []string
	for _, o := range g {
		l, ok := locked[o.Path]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s is not in lock.yaml", o))
		case l != o:
			out = append(out, fmt.Sprintf("%s, but lock.yaml has %s", o, l))
		}
		delete(locked, o.Path)
	}
	for _, o := range w {
		if _, ok := locked[o.Path]; ok {
			out = append(out, fmt.Sprintf("lock.yaml has %s, which the harness no longer does", o))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return out[0]
}

func overridesNode(ovs []Override) *yaml.Node {
	ovs = slices.Clone(ovs)
	SortOverrides(ovs)
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, o := range ovs {
		m := mapping()
		addScalar(m, "path", o.Path, "!!str")
		if o.Deleted {
			addScalar(m, "deleted", "true", "!!bool")
		} else {
			addScalar(m, "source", o.Source, "!!str")
			addScalar(m, "sha256", o.SHA256, "!!str")
		}
		seq.Content = append(seq.Content, m)
	}
	return seq
}
