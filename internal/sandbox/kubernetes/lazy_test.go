package kubernetes

import (
	"os"
	"os/exec"
	"testing"
)

// The scheme of the client is built on first use, not at package
// initialisation (checked in a fresh process of the test binary).
func TestSchemeNotBuiltAtInit(t *testing.T) {
	const env = "FULLSEND_K8S_SCHEME_PROBE"
	if os.Getenv(env) == "1" {
		if schemeBuilt.Load() {
			t.Fatal("the client scheme was built during package initialisation")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSchemeNotBuiltAtInit$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("probe process: %v\n%s", err, out)
	}
	if s, pc := codecs(); s == nil || pc == nil || !schemeBuilt.Load() {
		t.Fatal("codecs did not build the scheme")
	}
}
