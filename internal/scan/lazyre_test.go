package scan

import (
	"github.com/fullsend-ai/fullsend/internal/lazyre"
	"os"
	"os/exec"
	"testing"
)

// Every pattern compiles (they are compiled lazily, so a bad one would
// otherwise surface only when a hook first needs it).
func TestLazyPatternsCompile(t *testing.T) {
	if len(lazyre.All()) < 15 {
		t.Fatalf("%d lazy patterns registered; the scanners have more than 15", len(lazyre.All()))
	}
	for _, l := range lazyre.All() {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("pattern %q: %v", l.String(), r)
				}
			}()
			if l.Get() == nil || !l.Compiled() {
				t.Errorf("pattern %q: not compiled after get", l.String())
			}
		}()
	}
}

// Package initialisation compiles no pattern: a fresh test process that
// runs only the probe below finds every pattern uncompiled.
func TestLazyPatternsNotCompiledAtInit(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestLazyPatternsProbe$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FULLSEND_SCAN_LAZY_PROBE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe process: %v\n%s", err, out)
	}
}

func TestLazyPatternsProbe(t *testing.T) {
	if os.Getenv("FULLSEND_SCAN_LAZY_PROBE") != "1" {
		t.Skip("runs only as TestLazyPatternsNotCompiledAtInit's child process")
	}
	if len(lazyre.All()) == 0 {
		t.Fatal("no lazy patterns registered")
	}
	for _, l := range lazyre.All() {
		if l.Compiled() {
			t.Errorf("pattern %q was compiled during package initialisation", l.String())
		}
	}
}
