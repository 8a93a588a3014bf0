package harness

import (
	"fmt"
	"maps"
	"slices"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// checkTrust applies the org's trust rules that concern values rather than
// references, to the composed harness and to each forge overlay not yet
// applied:
//
//   - env.runner and env.sandbox names must pass cfg.CheckEnvName (no
//     loader, shell or interpreter variables unless the org allows them);
//   - resources: may lower sandbox.limits, never raise them;
//   - security.enabled: false only when cfg.Security.AllowDisable.
//
// That remote content never sets env.runner is enforced earlier, per
// layer, by absolutize.
func (h *Harness) checkTrust(cfg *config.Config) error {
	if err := h.checkEnvNames(cfg, ""); err != nil {
		return err
	}
	if !h.Security.SecurityEnabled() && !cfg.Security.AllowDisable {
		pos := h.Pos("security.enabled", "")
		return &yamlx.Error{File: pos.File, Line: pos.Line, Field: "security.enabled", Err: ErrSecurityDisabled}
	}
	if err := h.checkResources(cfg, ""); err != nil {
		return err
	}
	for _, name := range h.ForgeNames() {
		o := *h.Forge[name]
		o.origins = filterPrefix(h.origins, "forge."+name+".")
		prefix := "forge." + name + "."
		if err := o.checkEnvNames(cfg, prefix); err != nil {
			return err
		}
		if err := o.checkResources(cfg, prefix); err != nil {
			return err
		}
	}
	return nil
}

func (h *Harness) checkEnvNames(cfg *config.Config, prefix string) error {
	for _, e := range []struct {
		name string
		m    map[string]string
	}{{"env.runner", h.Env.Runner}, {"env.sandbox", h.Env.Sandbox}} {
		for _, k := range slices.Sorted(maps.Keys(e.m)) {
			if err := cfg.CheckEnvName(k); err != nil {
				field := prefix + e.name + "." + k
				pos := h.Pos(field, "")
				return &yamlx.Error{File: pos.File, Line: pos.Line, Field: field, Err: err}
			}
		}
	}
	return nil
}

func (h *Harness) checkResources(cfg *config.Config, prefix string) error {
	org := cfg.Sandbox.Limits
	key := config.Exceeds(org, h.Resources)
	if key == "" {
		return nil
	}
	where := "the default"
	if cfg.Path != "" {
		where = cfg.Path
	}
	field := prefix + "resources." + key
	pos := h.Pos(field, config.LimitValue(h.Resources, key))
	return &yamlx.Error{File: pos.File, Line: pos.Line, Field: field, Err: fmt.Errorf("%w: %s raises the org limit sandbox.limits.%s = %s (%s); a harness may only lower it",
		yamlx.ErrValue, config.LimitValue(h.Resources, key), key, config.LimitValue(org, key), where)}
}
