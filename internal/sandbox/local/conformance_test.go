//go:build linux

package local_test

import (
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local"
	"github.com/fullsend-ai/fullsend/internal/sandbox/sandboxtest"
)

func TestConformance(t *testing.T) {
	sandboxtest.Run(t, func(t *testing.T, o sandbox.Options) sandbox.Backend {
		b, err := local.New(o)
		if err != nil {
			t.Skipf("local backend unavailable: %v", err)
		}
		return b
	})
}
