package scan

import (
	"fmt"

	"github.com/fullsend-ai/fullsend/internal/config"
)

// Overrides are the scan settings a harness may carry (its security:
// fail_mode and host_scanners). A harness can only tighten the org policy:
// it may switch the fail mode to closed, turn the local context-injection
// scan on, and raise ML thresholds; a weaker request is ignored with a
// notice. Zero fields mean "as configured".
type Overrides struct {
	FailMode         string  // "" | "closed" | "open"
	ContextInjection *bool   // local content; remote is always on
	MLThreshold      float64 // applied to both origins when higher
}

// OptionsFromConfig turns the org configuration (nil = defaults) and a
// harness's overrides (nil = none) into pipeline options. Callers set
// FindingsLog (FindingsPath of the cache directory) and Getenv. The
// monotonicity rules of New (remote never below 0.95 or below local, remote
// context injection always on) apply on top.
func OptionsFromConfig(c *config.Config, h *Overrides) Options {
	if c == nil {
		c = config.Default()
	}
	sec := c.Security
	o := DefaultOptions()
	if sec.FailMode != "" {
		o.FailMode = sec.FailMode
	}
	if v := sec.Scan.Local.ContextInjection; v != nil {
		o.Local.ContextInjection = *v
	}
	if t := sec.Scan.Local.MLThreshold; t != 0 {
		o.Local.MLThreshold = t
	}
	if t := sec.Scan.Remote.MLThreshold; t != 0 {
		o.Remote.MLThreshold = t
	}
	o.LLMGuard = LLMGuard{URL: sec.LLMGuard.URL, TokenEnv: sec.LLMGuard.TokenEnv, Timeout: sec.LLMGuard.Timeout}
	o.AllowedPrivateNetworks = append(o.AllowedPrivateNetworks, sec.RemoteResources.AllowedPrivateNetworks...)
	if h == nil {
		return o
	}
	switch h.FailMode {
	case "", o.FailMode:
	case FailClosed:
		o.FailMode = FailClosed
	default:
		o.Notices = append(o.Notices, fmt.Sprintf("harness security.fail_mode %q ignored: a harness cannot loosen the org fail mode %q", h.FailMode, o.FailMode))
	}
	if v := h.ContextInjection; v != nil {
		if *v {
			o.Local.ContextInjection = true
		} else if o.Local.ContextInjection {
			o.Notices = append(o.Notices, "harness context_injection: false ignored: a harness cannot turn off a scan the org config enables")
		}
	}
	if t := h.MLThreshold; t != 0 {
		if !(t > 0 && t <= 1) {
			o.Notices = append(o.Notices, fmt.Sprintf("harness ML threshold %v ignored: want a number in (0, 1]", t))
		} else {
			if t > o.Local.MLThreshold {
				o.Local.MLThreshold = t
			} else if t < o.Local.MLThreshold {
				o.Notices = append(o.Notices, fmt.Sprintf("harness ML threshold %.2f ignored for local content: below the configured %.2f", t, o.Local.MLThreshold))
			}
			if t > o.Remote.MLThreshold {
				o.Remote.MLThreshold = t
			}
		}
	}
	return o
}
