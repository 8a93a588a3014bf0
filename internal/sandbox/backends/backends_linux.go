package backends

import (
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/docker"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local"
)

func openLocal(o sandbox.Options) (sandbox.Backend, error)  { return local.New(o) }
func openDocker(o sandbox.Options) (sandbox.Backend, error) { return docker.New(o) }
