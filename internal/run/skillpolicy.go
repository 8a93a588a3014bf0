package run

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/netguard"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// narrowBySkillPolicies applies the policies skills name in their SKILL.md
// (`policy:`, an edge of the graph: fetched, verified, scanned and locked
// like every other) to the sandbox the harness policy and profiles
// describe. One sandbox serves every skill, and a skill may only make it
// stricter: the egress allowlist becomes its intersection with each skill
// policy's endpoints. An endpoint a skill policy lists that the harness
// does not allow is not added (a note says so); a skill policy without
// network_policies leaves no egress at all. A skill policy's
// filesystem_policy is not applied (policy paths never become mounts, see
// mapFilesystem); a note says so. Runs after planSpec.
func (p *Plan) narrowBySkillPolicies(res *resolve.Result) error {
	if res.Graph == nil {
		return nil
	}
	for _, sp := range res.Graph.SkillPolicies() {
		skill := refOf(sp.Skill)
		var pol policyFile
		if err := readYAML(sp.Node.LocalPath, &pol); err != nil {
			return &PlanError{Field: fmt.Sprintf("skills (%s): policy", skill), Err: fmt.Errorf("%s: %w", sp.Node.LocalPath, err)}
		}
		names := make([]string, 0, len(pol.NetworkPolicies))
		for k := range pol.NetworkPolicies {
			names = append(names, k)
		}
		sort.Strings(names)
		var want []string
		for _, k := range names {
			e, err := allowEntries(fmt.Sprintf("%s: network_policies.%s", refOf(sp.Node), k), pol.NetworkPolicies[k].Endpoints)
			if err != nil {
				return &PlanError{Field: fmt.Sprintf("skills (%s): policy", skill), Err: err}
			}
			want = append(want, e...)
		}
		kept, refused := intersectAllow(p.Spec.Network.Allow, want)
		for _, e := range refused {
			p.Notes = append(p.Notes, fmt.Sprintf("skill %s: policy %s: egress to %s is not allowed by the harness and is not added (a skill policy only narrows)", skill, refOf(sp.Node), e))
		}
		if !slices.Equal(kept, p.Spec.Network.Allow) {
			p.Notes = append(p.Notes, fmt.Sprintf("skill %s: policy %s narrows egress to %s", skill, refOf(sp.Node), describeAllow(kept)))
		}
		if len(pol.FilesystemPolicy.ReadOnly)+len(pol.FilesystemPolicy.ReadWrite) > 0 {
			p.Notes = append(p.Notes, fmt.Sprintf("skill %s: policy %s: filesystem_policy is not applied (a skill policy narrows egress only)", skill, refOf(sp.Node)))
		}
		p.Spec.Network.Allow = kept
	}
	return nil
}

func describeAllow(l []string) string {
	if len(l) == 0 {
		return "nothing"
	}
	return strings.Join(l, ", ")
}

// intersectAllow returns the allowlist entries that both have and want
// admit (sorted, unique), and the entries of want that have does not
// admit at all (refused). Entries are sandbox.ParseAllow's host[:port];
// both lists were checked by allowEntries.
func intersectAllow(have, want []string) (kept, refused []string) {
	for _, w := range want {
		we, err := sandbox.ParseAllow(w)
		if err != nil {
			refused = append(refused, w)
			continue
		}
		hit := false
		for _, h := range have {
			he, err := sandbox.ParseAllow(h)
			if err != nil {
				continue
			}
			if e, ok := intersectEntry(he, we); ok {
				kept = append(kept, e)
				hit = true
			}
		}
		if !hit {
			refused = append(refused, w)
		}
	}
	return sortedUnique(kept), refused
}

// intersectEntry is the entry admitting exactly what both a and b admit,
// if they share anything. Hosts: equal, a name inside the other's "*."
// pattern, or the narrower of two nested patterns. Ports: equal, or 80 or
// 443 inside a port-less entry (which admits both).
func intersectEntry(a, b sandbox.AllowEntry) (string, bool) {
	host, ok := intersectHost(a.Host, b.Host)
	if !ok {
		return "", false
	}
	port := 0
	switch {
	case a.Port == b.Port:
		port = a.Port
	case a.Port == 0 && (b.Port == 80 || b.Port == 443):
		port = b.Port
	case b.Port == 0 && (a.Port == 80 || a.Port == 443):
		port = a.Port
	default:
		return "", false
	}
	if port == 0 {
		return hostForm(host), true
	}
	return hostForm(host) + ":" + strconv.Itoa(port), true
}

func intersectHost(a, b string) (string, bool) {
	if a == b {
		return a, true
	}
	as, aw := strings.CutPrefix(a, "*.")
	bs, bw := strings.CutPrefix(b, "*.")
	switch {
	case aw && bw:
		if strings.HasSuffix(bs, "."+as) {
			return b, true
		}
		if strings.HasSuffix(as, "."+bs) {
			return a, true
		}
	case aw:
		if _, ok := netguard.MatchHost(b, []string{a}); ok {
			return b, true
		}
	case bw:
		if _, ok := netguard.MatchHost(a, []string{b}); ok {
			return a, true
		}
	}
	return "", false
}

// hostForm writes an IPv6 literal in brackets, as ParseAllow reads it.
func hostForm(h string) string {
	if a, err := netip.ParseAddr(h); err == nil && a.Is6() {
		return "[" + h + "]"
	}
	return h
}
