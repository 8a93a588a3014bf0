package kubernetes_test

import (
	"testing"

	"github.com/fullsend-ai/fullsend/internal/lazyre/lazyretest"
)

// Every pattern of the package compiles (they compile on first use, so a
// bad one would otherwise surface only when first needed).
func TestLazyPatternsCompile(t *testing.T) { lazyretest.CompileAll(t, 1) }

// Package initialisation compiles no pattern.
func TestLazyPatternsNotCompiledAtInit(t *testing.T) {
	lazyretest.NotCompiledAtInit(t, "TestLazyPatternsProbe")
}

func TestLazyPatternsProbe(t *testing.T) { lazyretest.Probe(t) }
