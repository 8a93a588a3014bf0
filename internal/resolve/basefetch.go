package resolve

import (
	"errors"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/cas"
)

// baseFetchType is the audit fetch type of a resource of kind that a
// remote base harness brings in: base_skill for a skill directory,
// base_script for a script, base_resource for everything else (the base
// itself, agents, policies, schemas, profiles, providers, plugins, single
// documents).
func baseFetchType(kind string) string {
	switch kind {
	case "skill":
		return FetchBaseSkill
	case "script":
		return FetchBaseScript
	}
	return FetchBaseResource
}

// isBaseFetch reports whether t is one of the base fetch types.
func isBaseFetch(t string) bool { return strings.HasPrefix(t, "base_") }

// SkillPolicyField is the field of the edge from a skill directory to the
// policy its SKILL.md frontmatter names (`policy:`).
const SkillPolicyField = "policy"

// SkillPolicy is a policy named by a skill's SKILL.md.
type SkillPolicy struct {
	Skill *Node // the skill directory
	Node  *Node // the policy file (LocalPath: where to read it)
}

// SkillPolicies lists the policies skills of the graph name, in graph
// order, the root included when it is a skill (ResolveSkill); a policy
// shared by two skills is listed for each.
func (g *Graph) SkillPolicies() []SkillPolicy {
	var out []SkillPolicy
	for _, n := range g.all() {
		if n.Kind != "skill" || n.Type != cas.TypeDirectory {
			continue
		}
		for _, e := range n.Edges {
			if e.Field == SkillPolicyField && e.To.Kind == "policy" {
				out = append(out, SkillPolicy{Skill: n, Node: e.To})
			}
		}
	}
	return out
}

// ErrSkillPolicyRuntime: a skill fetched at run time names a policy.
var ErrSkillPolicyRuntime = errors.New("runtime-fetched skill with a policy")
