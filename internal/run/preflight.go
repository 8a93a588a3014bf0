package run

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/builtin"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// Checks a run makes before anything is provisioned. The rules themselves
// live where they belong: runtime names in the runtime registry, a
// runtime's own settings in the runtime (runtime.Preflighter); this file
// only asks them early.

// errUnknownRuntime marks a runtime name nobody registered.
var errUnknownRuntime = errors.New("unknown runtime")

// CheckRuntimeName reports whether name is a registered runtime (script,
// native, claude).
func CheckRuntimeName(name string) error {
	known := builtin.Names()
	if slices.Contains(known, name) {
		return nil
	}
	return fmt.Errorf("%w %q (known: %s)", errUnknownRuntime, name, strings.Join(known, ", "))
}

// CheckHarnessRuntime checks the runtime names a harness and the org config
// give, each error naming file, line and field.
func CheckHarnessRuntime(h *harness.Harness, cfg *config.Config) error {
	if h != nil && h.Runtime != "" {
		if err := CheckRuntimeName(h.Runtime); err != nil {
			p := h.Pos("runtime", h.Runtime)
			file := p.File
			if file == "" {
				file = h.File
			}
			return &yamlx.Error{File: file, Line: p.Line, Field: "runtime", Err: fmt.Errorf("%w: %v", yamlx.ErrValue, err)}
		}
	}
	return checkConfigRuntime(cfg)
}

// checkConfigRuntime checks config.yaml's runtime: (the default of
// harnesses that name none).
func checkConfigRuntime(cfg *config.Config) error {
	if cfg == nil || cfg.Runtime == "" {
		return nil
	}
	err := CheckRuntimeName(cfg.Runtime)
	if err == nil {
		return nil
	}
	return &yamlx.Error{File: cfg.Path, Line: configKeyLine(cfg.Path, "runtime"), Field: "runtime", Err: fmt.Errorf("%w: %v", yamlx.ErrValue, err)}
}

// configKeyLine is the line of a top-level key of a YAML file (0 when it
// cannot be found); config.Config keeps no positions.
func configKeyLine(path, key string) int {
	data, err := readHead(path)
	if err != nil {
		return 0
	}
	root, err := yamlx.Parse(path, data)
	if err != nil {
		return 0
	}
	pairs, err := yamlx.Pairs(path, "", root)
	if err != nil {
		return 0
	}
	for _, kv := range pairs {
		if kv[0].Value == key {
			return kv[0].Line
		}
	}
	return 0
}

// readHead reads at most yamlx.MaxFileSize bytes of a file.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, yamlx.MaxFileSize))
}

// preflightRuntime lets the runtime refuse a run that cannot succeed
// before any sandbox exists (runtime.Preflighter: the native runtime
// builds its model configuration as Run will and checks an endpoint named
// explicitly answers).
func preflightRuntime(p *Plan) error {
	rt, err := builtin.Get(p.Runtime)
	if err != nil {
		return nil // refused before planning (CheckRuntimeName)
	}
	pf, ok := rt.(runtime.Preflighter)
	if !ok {
		return nil
	}
	return pf.Preflight(runtime.PreflightInput{Config: p.RuntimeConfig(), Model: p.Model, AgentFile: p.AgentFile})
}
