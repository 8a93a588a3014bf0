package chat

import (
	"maps"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

// RuntimeName is the runtime chat serves: only the native runtime keeps a
// conversation across turns.
const RuntimeName = native.Name

// NewFlags returns the chat runtime's command-line flags (the native
// runtime's own).
func NewFlags() runtime.Flags { return native.New(native.Options{}).NewFlags() }

// Settings returns the chat runtime's settings parsed from its flags
// (never nil: no flag given is the zero settings).
func Settings(c runtime.Config) runtime.Config {
	if nc, ok := c.(*native.Config); ok && nc != nil {
		return nc
	}
	return &native.Config{}
}

// NewRuntime returns the runtime of a chat whose streamed deltas go to the
// server *srv (set once the sandbox is up; no delta comes before that).
func NewRuntime(srv **Server) runtime.Runtime {
	return native.New(native.Options{OnDelta: func(d native.Delta) { (*srv).Delta(d) }})
}

// Redactor removes the model API key, as the runtime finds it from the
// settings and the host environment, from everything chat writes.
func Redactor(getenv func(string) string, c runtime.Config) func(string) string {
	nc, _ := Settings(c).(*native.Config)
	mc, err := model.ConfigFromEnv(getenv, model.Overrides{API: nc.API, BaseURL: nc.BaseURL,
		Model: nc.Model, Auth: nc.Auth, KeyEnv: nc.KeyEnv})
	key := ""
	if err == nil {
		key = mc.Key.Reveal()
	}
	return func(s string) string { return model.Redact(s, key) }
}

// TurnOptions returns the runtime options of one chat turn: the run's,
// in chat mode, with this turn's images (sandbox paths) only.
func TurnOptions(run map[string]string, images []string) map[string]string {
	o := maps.Clone(run)
	if o == nil {
		o = map[string]string{}
	}
	o[native.OptChat] = "true"
	delete(o, native.OptImages)
	if len(images) > 0 {
		o[native.OptImages] = strings.Join(images, "\n")
	}
	return o
}
