package harness

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// Subagent settings of the native runtime (native: in a harness).
const (
	DefaultMaxParallelChildren = 1
	MaxParallelChildren        = 8
)

// KnownSubagentProfiles are the delegate_task child profiles of the native
// runtime (package native defines what each may do).
var KnownSubagentProfiles = []string{"default", "read_only", "web_fetch"}

// DefaultSubagentProfiles are the profiles allowed when the harness names
// none.
var DefaultSubagentProfiles = []string{"default"}

// remoteSubagentProfiles are the profiles remote content may allow: none
// gives a child more than the default profile does (web_fetch reaches the
// network from the host side).
var remoteSubagentProfiles = []string{"default", "read_only"}

// ErrRemoteNative: remote content may not widen the native runtime's
// delegation (more profiles than the default's reach, more children at
// once).
var ErrRemoteNative = errors.New("remote content may not widen delegation (only subagent_profiles default and read_only, max_parallel_children 1; declare more in a local harness)")

// NativeTools are the extra native tools a harness may allow. web_fetch
// fetches web pages on the host, within the run's egress allowlist.
var NativeTools = []string{"web_fetch"}

// Native holds the native runtime's settings of a harness.
type Native struct {
	// Tools are extra native tools the harness allows (NativeTools); a
	// remote layer may not set them (ErrRemoteNativeTools).
	Tools []string
	// SubagentProfiles the parent may start delegate_task children with;
	// nil when unset (DefaultSubagentProfiles), empty for none.
	SubagentProfiles []string
	// MaxParallelChildren is how many children may run at once, each in
	// its own sandbox session when above 1 (0 = unset: 1).
	MaxParallelChildren int
}

// EffectiveSubagentProfiles is native.subagent_profiles, or its default.
func (h *Harness) EffectiveSubagentProfiles() []string {
	if !h.set["native.subagent_profiles"] {
		return DefaultSubagentProfiles
	}
	if h.Native.SubagentProfiles == nil {
		return []string{}
	}
	return h.Native.SubagentProfiles
}

// EffectiveMaxParallelChildren is native.max_parallel_children, or its
// default.
func (h *Harness) EffectiveMaxParallelChildren() int {
	if h.Native.MaxParallelChildren > 0 {
		return h.Native.MaxParallelChildren
	}
	return DefaultMaxParallelChildren
}

// nativeYAML is the native: mapping of a harness file.
type nativeYAML struct {
	Tools               []string `yaml:"tools"`
	SubagentProfiles    []string `yaml:"subagent_profiles"`
	MaxParallelChildren int      `yaml:"max_parallel_children"`
}

var _ yamlx.KeyChecker = (*nativeYAML)(nil)

func (w *nativeYAML) CheckKey(f *yamlx.Fields, key string) error {
	h, field, v := target(f), f.Field(key), f.Value(key)
	switch key {
	case "tools":
		for i, t := range w.Tools {
			if !slices.Contains(NativeTools, t) {
				return yamlx.Errorf(f.File, v.Content[i], fmt.Sprintf("%s[%d]", field, i), yamlx.ErrValue,
					"unknown native tool %q (known: %s)", t, strings.Join(NativeTools, ", "))
			}
		}
		h.Native.Tools = w.Tools
		h.markList(field, v, w.Tools)
	case "subagent_profiles":
		if yamlx.IsNull(v) {
			return nil // unset: the default
		}
		for i, p := range w.SubagentProfiles {
			if !slices.Contains(KnownSubagentProfiles, p) {
				return yamlx.Errorf(f.File, v.Content[i], fmt.Sprintf("%s[%d]", field, i), yamlx.ErrValue, "unknown profile %q (known: %s)", p, strings.Join(KnownSubagentProfiles, ", "))
			}
			if slices.Index(w.SubagentProfiles, p) != i {
				return yamlx.Errorf(f.File, v.Content[i], fmt.Sprintf("%s[%d]", field, i), yamlx.ErrValue, "profile %q listed twice", p)
			}
		}
		h.Native.SubagentProfiles = slices.Clone(w.SubagentProfiles)
		if h.Native.SubagentProfiles == nil {
			h.Native.SubagentProfiles = []string{}
		}
		h.markList(field, v, w.SubagentProfiles)
	case "max_parallel_children":
		if x := w.MaxParallelChildren; x < 1 || x > MaxParallelChildren {
			return f.Errorf(key, yamlx.ErrValue, "must be between 1 and %d", MaxParallelChildren)
		}
		h.Native.MaxParallelChildren = w.MaxParallelChildren
		h.mark(field, v)
	}
	return nil
}

// mergeNative: native.tools is the union of the layers' (remote layers may
// not set it at all, so every grant comes from a local file); each other
// native key the child sets wins over its base's.
func mergeNative(base, child *Harness) Native {
	n := base.Native
	n.Tools = slices.Compact(slices.Sorted(slices.Values(concat(base.Native.Tools, child.Native.Tools))))
	if child.set["native.subagent_profiles"] {
		n.SubagentProfiles = child.Native.SubagentProfiles
	}
	if child.set["native.max_parallel_children"] {
		n.MaxParallelChildren = child.Native.MaxParallelChildren
	}
	return n
}

// checkRemoteNative refuses, in remote content, a native: setting wider
// than the default (ErrRemoteNative at the value that widens it).
func checkRemoteNative(h *Harness) error {
	for _, p := range h.Native.SubagentProfiles {
		if !slices.Contains(remoteSubagentProfiles, p) {
			pos := h.Pos("native.subagent_profiles", p)
			return &yamlx.Error{File: pos.File, Line: pos.Line, Field: "native.subagent_profiles", Err: fmt.Errorf("%q: %w", p, ErrRemoteNative)}
		}
	}
	if h.Native.MaxParallelChildren > DefaultMaxParallelChildren {
		pos := h.Pos("native.max_parallel_children", "")
		return &yamlx.Error{File: pos.File, Line: pos.Line, Field: "native.max_parallel_children", Err: ErrRemoteNative}
	}
	return nil
}
