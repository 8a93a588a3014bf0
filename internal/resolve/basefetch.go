package resolve

import (
	"errors"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/lock"
	"github.com/fullsend-ai/fullsend/internal/ref"
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

// vendorBaseScripts stands lock.yaml's vendored copies in for the scripts
// a remote base brings in. A base's relative pre_script (post_script,
// validation_loop.script, in forge overlays too) is a URL once the base is
// composed, and executable resources are never fetched (package harness
// refuses them as ErrExecutableRemote). When the lock file vendors that
// script — an entry under vendor: whose URL is the script's, or the same
// repository path at the branch or tag the entry follows — the field
// becomes the vendored file: checked like any local script, hashed, held
// to the recorded sha256 (checkVendored), and audited as base_script.
// Called before the harness is checked.
func (r *resolver) vendorBaseScripts(h *harness.Harness) {
	if r.o.Lock == nil || len(r.o.Lock.Vendor) == 0 {
		return
	}
	for _, fr := range h.Refs() {
		if fr.Kind != harness.Script || fr.EnvExpanded() || !r.baseRefs[fr.Value] {
			continue
		}
		rf, err := ref.Parse(fr.Value)
		if err != nil || rf.Kind != ref.URL {
			continue
		}
		if v := r.vendoredAt(rf.URL); v != nil {
			setField(h, fr.Field, v.Path)
			r.baseScripts[v.Path] = *v
		}
	}
}

// vendoredAt is the vendor: entry of lock.yaml for the script URL u.
func (r *resolver) vendoredAt(u string) *lock.Vendored {
	for i := range r.o.Lock.Vendor {
		if v := &r.o.Lock.Vendor[i]; vendorServes(*v, u, r.cfg.Forges) {
			return v
		}
	}
	return nil
}

// auditBaseScript records the use of the vendored copy of a base's
// script n (a local node) as a base_script fetch from the vendor: entry.
func (r *resolver) auditBaseScript(n *Node) {
	v, ok := r.baseScripts[n.Ref]
	if !ok || r.o.Audit == nil {
		return
	}
	err := r.o.Audit.Append(audit.Entry{
		TraceID: r.traceID, FetchTime: r.now().UTC(), URL: v.URL, SHA256: string(n.SHA256),
		FetchType: FetchBaseScript, AllowedBy: "lock.yaml vendor: " + v.Path, CacheHit: true, Source: audit.SourceVendor,
	})
	if err != nil {
		r.mu.Lock()
		if r.auditErr == nil {
			r.auditErr = err
		}
		r.mu.Unlock()
	}
}
