package harness

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
)

// Merge composes a child harness over its base (or a forge overlay over its
// harness) and returns a new harness; neither input is modified.
//
//   - scalars: the child's value wins when the child sets it;
//   - skills: base first, then child; a base entry whose basename equals a
//     child entry's basename is replaced by it;
//   - plugins, providers, openshell.profiles: base first, then child
//     (exact duplicates dropped);
//   - host_files: concatenated, the last entry for a given dest wins;
//   - env.runner / env.sandbox: maps merged, child keys win;
//   - resources: per key, the lower value (a child never raises its base);
//   - validation_loop: per key, child wins;
//   - forge: overlays merged per forge name with these same rules;
//   - allowed_remote_resources: the union;
//   - native.subagent_profiles, native.max_parallel_children: child wins;
//   - security and readonly_repo: the stricter value of each setting (closed
//     over open, on over off), so a child never weakens its base. A child
//     value that loses is reported in Notices.
func Merge(base, child *Harness) *Harness {
	m := &Harness{
		File:   child.File,
		Root:   child.Root,
		Layers: child.Layers,
		set:    map[string]bool{},
	}
	for k := range base.set {
		m.set[k] = true
	}
	for k := range child.set {
		m.set[k] = true
	}
	m.origins = maps.Clone(base.origins)
	if m.origins == nil {
		m.origins = map[string]Pos{}
	}
	maps.Copy(m.origins, child.origins)
	m.Notices = append(slices.Clone(base.Notices), child.Notices...)

	m.Base = child.Base
	m.Agent = pick(child, "agent", base.Agent, child.Agent)
	m.Doc = pick(child, "doc", base.Doc, child.Doc)
	m.Model = pick(child, "model", base.Model, child.Model)
	m.Image = pick(child, "image", base.Image, child.Image)
	m.Runtime = pick(child, "runtime", base.Runtime, child.Runtime)
	m.Policy = pick(child, "policy", base.Policy, child.Policy)
	m.Role = pick(child, "role", base.Role, child.Role)
	m.Slug = pick(child, "slug", base.Slug, child.Slug)
	m.PreScript = pick(child, "pre_script", base.PreScript, child.PreScript)
	m.PostScript = pick(child, "post_script", base.PostScript, child.PostScript)
	m.TimeoutMinutes = pick(child, "timeout_minutes", base.TimeoutMinutes, child.TimeoutMinutes)
	m.SandboxTimeoutSeconds = pick(child, "sandbox_timeout_seconds", base.SandboxTimeoutSeconds, child.SandboxTimeoutSeconds)
	m.Effort = pick(child, "effort", base.Effort, child.Effort)
	m.Description = pick(child, "description", base.Description, child.Description)
	m.Trigger = pick(child, "trigger", base.Trigger, child.Trigger)
	m.AgentInput = pick(child, "agent_input", base.AgentInput, child.AgentInput)
	m.AllowRuntimeFetch = pick(child, "allow_runtime_fetch", base.AllowRuntimeFetch, child.AllowRuntimeFetch)
	m.MaxRuntimeFetches = pick(child, "max_runtime_fetches", base.MaxRuntimeFetches, child.MaxRuntimeFetches)
	m.ReadonlyRepo = base.ReadonlyRepo || child.ReadonlyRepo
	if base.ReadonlyRepo && child.set["readonly_repo"] && !child.ReadonlyRepo {
		m.Notices = append(m.Notices, fmt.Sprintf("%s: readonly_repo: false ignored; the base sets true and a child cannot weaken it", child.File))
	}

	m.Skills = mergeSkills(base.Skills, child.Skills)
	m.SkillOverrides = mergeOverrides(base, child)
	m.Plugins = concat(base.Plugins, child.Plugins)
	m.Providers = concat(base.Providers, child.Providers)
	m.ProviderNames = concat(base.ProviderNames, child.ProviderNames)
	m.Secrets = concat(base.Secrets, child.Secrets)
	m.Openshell.Profiles = concat(base.Openshell.Profiles, child.Openshell.Profiles)
	m.AllowedRemoteResources = concat(base.AllowedRemoteResources, child.AllowedRemoteResources)
	m.HostFiles = mergeHostFiles(base.HostFiles, child.HostFiles)
	m.Env.Runner = mergeMap(base.Env.Runner, child.Env.Runner)
	m.Env.Sandbox = mergeMap(base.Env.Sandbox, child.Env.Sandbox)
	m.Resources = base.Resources.Min(child.Resources)

	m.ValidationLoop = mergeValidationLoop(base.ValidationLoop, child.ValidationLoop, child.set)

	m.Security, m.Notices = mergeSecurity(base.Security, child.Security, child.File, m.Notices)
	m.Native = mergeNative(base, child)

	m.Forge = mergeForges(base.Forge, child.Forge)
	return m
}

// pick returns the child's value of field when the child sets field, else
// the base's.
func pick[T any](child *Harness, field string, b, c T) T {
	if child.set[field] {
		return c
	}
	return b
}

// mergeValidationLoop merges validation_loop per key, the child's keys
// (those set in its file) winning.
func mergeValidationLoop(base, child *ValidationLoop, set map[string]bool) *ValidationLoop {
	if base == nil && child == nil {
		return nil
	}
	vl := &ValidationLoop{}
	if base != nil {
		*vl = *base
	}
	if c := child; c != nil {
		if set["validation_loop.script"] {
			vl.Script = c.Script
		}
		if set["validation_loop.schema"] {
			vl.Schema = c.Schema
		}
		if set["validation_loop.max_iterations"] {
			vl.MaxIterations = c.MaxIterations
		}
		if set["validation_loop.preflight_check"] {
			vl.PreflightCheck = c.PreflightCheck
		}
		if set["validation_loop.feedback_mode"] {
			vl.FeedbackMode = c.FeedbackMode
		}
	}
	return vl
}

// mergeForges merges the overlays per forge name with Merge's rules.
func mergeForges(base, child map[string]*Harness) map[string]*Harness {
	if len(base) == 0 && len(child) == 0 {
		return nil
	}
	m := map[string]*Harness{}
	for name, o := range base {
		m[name] = o
	}
	for name, o := range child {
		if b, ok := m[name]; ok {
			m[name] = Merge(b, o)
		} else {
			m[name] = o
		}
	}
	return m
}

func concat(a, b []string) []string {
	if a == nil && b == nil {
		return nil
	}
	out := make([]string, 0, len(a)+len(b))
	for _, s := range append(slices.Clone(a), b...) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// SkillName is the basename of a skill reference (path or URL, without its
// #sha256= pin or trailing slash).
func SkillName(s string) string {
	if i := strings.LastIndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimRight(s, "/")
	return path.Base(s)
}

func mergeSkills(base, child []string) []string {
	if base == nil && child == nil {
		return nil
	}
	names := map[string]bool{}
	for _, c := range child {
		names[SkillName(c)] = true
	}
	out := make([]string, 0, len(base)+len(child))
	for _, b := range base {
		if !names[SkillName(b)] {
			out = append(out, b)
		}
	}
	for _, c := range child {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func mergeHostFiles(base, child []HostFileSpec) []HostFileSpec {
	all := append(slices.Clone(base), child...)
	if len(all) == 0 {
		return nil
	}
	out := make([]HostFileSpec, 0, len(all))
	for i, hf := range all {
		later := false
		for _, n := range all[i+1:] {
			if n.Dest == hf.Dest {
				later = true
				break
			}
		}
		if !later {
			out = append(out, hf)
		}
	}
	return out
}

func mergeMap(a, b map[string]string) map[string]string {
	if a == nil && b == nil {
		return nil
	}
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

func stricterBool(b, c *bool) *bool {
	switch {
	case b == nil:
		return c
	case c == nil:
		return b
	}
	v := *b || *c
	return &v
}

// trustBool merges an opt-in that weakens a check: false anywhere wins,
// then true, then unset.
func trustBool(b, c *bool) *bool {
	switch {
	case b == nil:
		return c
	case c == nil:
		return b
	}
	v := *b && *c
	return &v
}

func mergeSecurity(b, c Security, file string, notices []string) (Security, []string) {
	var s Security
	switch {
	case b.FailMode == "closed" || c.FailMode == "closed":
		s.FailMode = "closed"
	case b.FailMode == "open" || c.FailMode == "open":
		s.FailMode = "open"
	}
	if b.FailMode == "closed" && c.FailMode == "open" {
		notices = append(notices, fmt.Sprintf("%s: security.fail_mode: open ignored; the base sets closed and a child cannot weaken it", file))
	}
	weak := func(name string, bv, cv *bool) {
		if bv != nil && cv != nil && *bv && !*cv {
			notices = append(notices, fmt.Sprintf("%s: security.%s: false ignored; the base sets true and a child cannot weaken it", file, name))
		}
	}
	weak("host_scanners", b.HostScanners, c.HostScanners)
	weak("context_injection", b.ContextInjection, c.ContextInjection)
	weak("enabled", b.Enabled, c.Enabled)
	weak("trace.enabled", b.Trace, c.Trace)
	s.Enabled = stricterBool(b.Enabled, c.Enabled)
	s.Trace = stricterBool(b.Trace, c.Trace)
	switch {
	case b.OnCritical == "halt" || c.OnCritical == "halt":
		s.OnCritical = "halt"
	case b.OnCritical == "review" || c.OnCritical == "review":
		s.OnCritical = "review"
	}
	if b.OnCritical == "halt" && c.OnCritical == "review" {
		notices = append(notices, fmt.Sprintf("%s: security.escalation.on_critical: review ignored; the base sets halt and a child cannot weaken it", file))
	}
	s.ReviewLabel = b.ReviewLabel
	if c.ReviewLabel != "" {
		s.ReviewLabel = c.ReviewLabel
	}
	s.HostScanners = stricterBool(b.HostScanners, c.HostScanners)
	s.ContextInjection = stricterBool(b.ContextInjection, c.ContextInjection)
	if b.TrustRepoSettings != nil && !*b.TrustRepoSettings && c.TrustRepoSettings != nil && *c.TrustRepoSettings {
		notices = append(notices, fmt.Sprintf("%s: security.trust_repo_settings: true ignored; the base sets false and a child cannot weaken it", file))
	}
	s.TrustRepoSettings = trustBool(b.TrustRepoSettings, c.TrustRepoSettings)
	if b.SandboxHooks != nil || c.SandboxHooks != nil {
		s.SandboxHooks = map[string]bool{}
		for _, k := range slices.Sorted(maps.Keys(b.SandboxHooks)) {
			s.SandboxHooks[k] = b.SandboxHooks[k]
		}
		for _, k := range slices.Sorted(maps.Keys(c.SandboxHooks)) {
			v := c.SandboxHooks[k]
			if prev, ok := s.SandboxHooks[k]; ok && prev && !v {
				notices = append(notices, fmt.Sprintf("%s: security.sandbox_hooks.%s: false ignored; the base sets true and a child cannot weaken it", file, k))
				continue
			}
			s.SandboxHooks[k] = v || s.SandboxHooks[k]
		}
	}
	return s, notices
}
