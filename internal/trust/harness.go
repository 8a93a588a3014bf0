package trust

import (
	"maps"
	"slices"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// CheckRepoHarness refuses, in a harness read from a repository layer
// (composed with its base: chain, forge overlays included), every field
// of HarnessFields: the error names file, line, field and the way out.
func CheckRepoHarness(h *harness.Harness) error {
	if err := checkRepoHarness(h, h, ""); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(h.Forge)) {
		if err := checkRepoHarness(h, h.Forge[name], "forge."+name+"."); err != nil {
			return err
		}
	}
	return nil
}

// checkRepoHarness checks one layer o of top (top holds the positions).
func checkRepoHarness(top, o *harness.Harness, prefix string) error {
	refuse := func(field, value string) error {
		pos := top.Pos(prefix+field, value)
		if pos.Line == 0 {
			pos = top.Pos(prefix+strings.SplitN(field, ".", 2)[0], "")
		}
		return &yamlx.Error{File: pos.File, Line: pos.Line, Field: prefix + field, Err: ErrRepoLayer}
	}
	for _, f := range HarnessFields {
		switch f.Key {
		case "pre_script":
			if o.PreScript != "" {
				return refuse(f.Key, o.PreScript)
			}
		case "post_script":
			if o.PostScript != "" {
				return refuse(f.Key, o.PostScript)
			}
		case "validation_loop.script":
			if vl := o.ValidationLoop; vl != nil && vl.Script != "" {
				return refuse(f.Key, vl.Script)
			}
		case "validation_loop.preflight_check":
			if vl := o.ValidationLoop; vl != nil && vl.PreflightCheck != "" {
				return refuse(f.Key, "")
			}
		case "host_files":
			if len(o.HostFiles) > 0 {
				return refuse(f.Key, o.HostFiles[0].Src)
			}
		case "env.runner":
			if len(o.Env.Runner) > 0 {
				k := slices.Sorted(maps.Keys(o.Env.Runner))[0]
				return refuse(f.Key+"."+k, o.Env.Runner[k])
			}
		case "env.sandbox ${VAR}":
			for _, k := range slices.Sorted(maps.Keys(o.Env.Sandbox)) {
				if strings.Contains(o.Env.Sandbox[k], "${") {
					return refuse("env.sandbox."+k, o.Env.Sandbox[k])
				}
			}
		case "native.tools":
			if len(o.Native.Tools) > 0 {
				return refuse(f.Key, o.Native.Tools[0])
			}
		case "absolute local paths":
			for _, r := range o.Refs() {
				if k, err := ref.Classify(r.Value); err == nil && k == ref.Absolute {
					return &yamlx.Error{File: r.Pos.File, Line: r.Pos.Line, Field: prefix + r.Field, Err: ErrRepoLayer}
				}
			}
		case "security.sandbox_hooks false":
			for _, k := range slices.Sorted(maps.Keys(o.Security.SandboxHooks)) {
				if !o.Security.SandboxHooks[k] {
					return refuse("security.sandbox_hooks."+k, "")
				}
			}
		case "security.enabled false":
			if !o.Security.SecurityEnabled() {
				return refuse("security.enabled", "")
			}
		case "security.escalation.on_critical review":
			if o.Security.OnCritical == "review" {
				return refuse("security.escalation.on_critical", "")
			}
		case "agent_input":
			if o.AgentInput != "" {
				return refuse(f.Key, o.AgentInput)
			}
		default:
			// A row with no check here: fail closed on any harness.
			return refuse(f.Key, "")
		}
	}
	return nil
}
