// Package lazyretest holds the two checks every package declaring
// lazyre patterns runs: all of them compile, and none is compiled during
// package initialisation (checked in a fresh child process).
package lazyretest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/lazyre"
)

const probeEnv = "FULLSEND_LAZYRE_PROBE"

// CompileAll compiles every registered pattern; a bad one fails t. atLeast
// guards against a package whose patterns stopped being registered.
func CompileAll(t *testing.T, atLeast int) {
	t.Helper()
	all := lazyre.All()
	if len(all) < atLeast {
		t.Fatalf("%d lazy patterns registered, want at least %d", len(all), atLeast)
	}
	for _, l := range all {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("pattern %q: %v", l.String(), r)
				}
			}()
			if l.Get() == nil || !l.Compiled() {
				t.Errorf("pattern %q: not compiled after Get", l.String())
			}
		}()
	}
}

// NotCompiledAtInit runs the test named probe (which calls Probe) alone in
// a fresh process of the test binary, and fails t if it fails.
func NotCompiledAtInit(t *testing.T, probe string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+probe+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), probeEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("probe process: %v\n%s", err, out)
	}
}

// Probe, in the child process of NotCompiledAtInit, fails if package
// initialisation compiled any pattern; elsewhere it skips.
func Probe(t *testing.T) {
	t.Helper()
	if os.Getenv(probeEnv) != "1" {
		t.Skip("runs only as the child process of a NotCompiledAtInit test")
	}
	all := lazyre.All()
	if len(all) == 0 {
		t.Fatal("no lazy patterns registered")
	}
	for _, l := range all {
		if l.Compiled() {
			t.Errorf("pattern %q was compiled during package initialisation", l.String())
		}
	}
}
