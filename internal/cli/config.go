package cli

import (
	"fmt"
	"sync"

	"github.com/fullsend-ai/fullsend/internal/config"
)

type configResult struct {
	cfg *config.Config
	err error
}

var (
	configMu    sync.Mutex
	configCache = map[string]configResult{}
)

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
// result per (Env, dir) so notices are printed once.
func (e *Env) loadOwnConfig(dir string) (*config.Config, error) {
	key := fmt.Sprintf("%p|%s", e, dir)
	configMu.Lock()
	defer configMu.Unlock()
	if r, ok := configCache[key]; ok {
		return r.cfg, r.err
	}
	cfg, notices, err := config.Load(dir)
	for _, n := range notices {
		e.notef("%s", n)
	}
	configCache[key] = configResult{cfg, err}
	return cfg, err
}
