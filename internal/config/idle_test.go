package config

import (
	"strings"
	"testing"
	"time"
)

func TestSandboxIdleTimeout(t *testing.T) {
	if d := Default().Sandbox.IdleTimeout; d != DefaultIdleTimeout {
		t.Fatalf("default %s", d)
	}
	c, _, err := Parse("config.yaml", []byte("sandbox:\n  idle_timeout: 90s\n"))
	if err != nil || c.Sandbox.IdleTimeout != 90*time.Second {
		t.Fatalf("%v %v", c, err)
	}
	for _, v := range []string{"0", "soon", "500ms", "-1m"} {
		_, _, err := Parse("config.yaml", []byte("sandbox:\n  idle_timeout: "+v+"\n"))
		if err == nil || !strings.HasPrefix(err.Error(), "config.yaml:2: sandbox.idle_timeout:") {
			t.Errorf("%s: %v", v, err)
		}
	}
}
