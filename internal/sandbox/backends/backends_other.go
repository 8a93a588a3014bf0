//go:build !linux

package backends

import (
	"runtime"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

func openLocal(sandbox.Options) (sandbox.Backend, error) {
	return nil, sandbox.NeedsLinux("local sandbox", runtime.GOOS)
}

func openDocker(sandbox.Options) (sandbox.Backend, error) {
	return nil, sandbox.NeedsLinux("docker sandbox", runtime.GOOS)
}
