package cli

import (
	"github.com/fullsend-ai/fullsend/internal/config"
)

type configResult struct {
	cfg *config.Config
	err error
}

// LoadConfig loads <FullsendDir>/config.yaml (defaults when absent), printing
// its notices (ignored keys, warnings) once per Env on stderr.
func (e *Env) LoadConfig() (*config.Config, error) {
	return e.loadConfigFrom(e.FullsendDir)
}

// loadConfigFrom loads the config in force for a given fullsend dir: its
// own, or, for a repository layer, the org layer's with it applied
// (trust.go).
func (e *Env) loadConfigFrom(dir string) (*config.Config, error) {
	return e.layerConfig(dir)
}

// loadOwnConfig loads the config.yaml of a given fullsend dir, caching the
// result per (Env, dir) so notices are printed once. The cache lives on the
// Env: a process-wide map keyed by the Env's address served a later
// command (a new Env at a freed one's address) a stale config.
func (e *Env) loadOwnConfig(dir string) (*config.Config, error) {
	e.configMu.Lock()
	defer e.configMu.Unlock()
	if r, ok := e.configs[dir]; ok {
		return r.cfg, r.err
	}
	cfg, notices, err := config.Load(dir)
	for _, n := range notices {
		e.notef("%s", n)
	}
	if e.configs == nil {
		e.configs = map[string]configResult{}
	}
	e.configs[dir] = configResult{cfg, err}
	return cfg, err
}
