package fetch_test

import (
	"testing"

	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
)

// TestDependencies: the fetch client depends on the standard library and
// on fullsend's pure rule packages only.
func TestDependencies(t *testing.T) {
	fetchtest.CheckDeps(t, "github.com/fullsend-ai/fullsend/internal/fetch",
		"github.com/fullsend-ai/fullsend/internal/limit",
		"github.com/fullsend-ai/fullsend/internal/netguard",
		"github.com/fullsend-ai/fullsend/internal/ref",
		"github.com/fullsend-ai/fullsend/internal/termsafe",
		"vendor/golang.org/x/")
}
