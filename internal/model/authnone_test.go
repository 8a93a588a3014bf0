package model_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/model"
)

// TestAuthNoneWithKeyIsAnError: the README promises that a key set together
// with FULLSEND_MODEL_AUTH=none is refused, never silently ignored — from
// the default key variable, the one FULLSEND_MODEL_KEY_ENV names, and the
// one --model-key-env names.
func TestAuthNoneWithKeyIsAnError(t *testing.T) {
	for _, tt := range []struct {
		name    string
		env     map[string]string
		o       model.Overrides
		keyName string
	}{
		{"default key variable", map[string]string{model.EnvAuth: "none", model.EnvAPIKey: testKey}, model.Overrides{Model: "m"}, model.EnvAPIKey},
		{"key env from the environment", map[string]string{model.EnvAuth: "none", model.EnvKeyEnv: "MY_KEY", "MY_KEY": testKey}, model.Overrides{Model: "m"}, "MY_KEY"},
		{"key env flag", map[string]string{"MY_KEY": testKey}, model.Overrides{Model: "m", Auth: "none", KeyEnv: "MY_KEY"}, "MY_KEY"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := model.ConfigFromEnv(env(tt.env), tt.o)
			var ce *model.ConfigError
			if !errors.As(err, &ce) || ce.Field != "auth" {
				t.Fatalf("err = %v, want a ConfigError on auth", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "FULLSEND_MODEL_AUTH=none") || !strings.Contains(msg, tt.keyName) || strings.Contains(msg, testKey) {
				t.Fatalf("message %q: want the auth setting and %s named, and no key", msg, tt.keyName)
			}
		})
	}
	// Without a key, none is fine and carries no key variable.
	c, err := model.ConfigFromEnv(env(map[string]string{model.EnvAuth: "none"}), model.Overrides{Model: "m"})
	if err != nil || c.Key != "" || c.KeyEnv != "" {
		t.Fatalf("none without key: %+v %v", c, err)
	}
}
