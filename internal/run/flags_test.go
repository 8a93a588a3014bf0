package run_test

import (
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/claude"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
	"github.com/fullsend-ai/fullsend/internal/runtime/script"
)

// The runtimes' command-line settings as the CLI passes them
// (run.Options.RuntimeFlags), for plans made without a command line.

func scriptFlags(file string) map[string]runtime.Config {
	return map[string]runtime.Config{script.Name: &script.Config{File: file}}
}

func nativeFlags(c native.Config) map[string]runtime.Config {
	return map[string]runtime.Config{native.Name: &c}
}

func claudeFlags(c claude.Config, binary, model string) map[string]runtime.Config {
	return map[string]runtime.Config{claude.Name: claude.FlagSettings(c, binary, model)}
}
