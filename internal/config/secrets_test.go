package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecretsParse(t *testing.T) {
	c, notes, err := Parse("config.yaml", []byte(`version: "1"
secrets:
  - name: ANTHROPIC_API_KEY
    from_env: ANTHROPIC_API_KEY
    hosts: [api.anthropic.com]
  - name: GH_TOKEN
    from_file: /run/secrets/gh
    hosts: [api.github.com, "github.com", "*.githubusercontent.com", "127.0.0.1:4000"]
    upstream_ca_file: /etc/corp/ca.pem
`))
	if err != nil || len(notes) != 0 {
		t.Fatal(err, notes)
	}
	if len(c.Secrets) != 2 || c.Secrets[0].Name != "ANTHROPIC_API_KEY" || c.Secrets[1].FromFile != "/run/secrets/gh" ||
		len(c.Secrets[1].Hosts) != 4 || c.Secrets[1].UpstreamCAFile != "/etc/corp/ca.pem" || c.Secrets[1].Line != 6 {
		t.Fatalf("%+v", c.Secrets)
	}
	if s, ok := c.SecretByName("GH_TOKEN"); !ok || s.Hosts[0] != "api.github.com" {
		t.Fatal(s)
	}
	if len(OrgOnlyKeys) != 1 || OrgOnlyKeys[0] != "secrets" {
		t.Fatal(OrgOnlyKeys)
	}
}

func TestSecretsParseErrors(t *testing.T) {
	for _, tc := range []struct{ entry, want string }{
		{"{from_env: X, hosts: [a.com]}", "config.yaml:3: secrets[0].name: invalid value: required"},
		{"{name: X, hosts: [a.com]}", "secrets[0].from_env: invalid value: required: from_env or from_file"},
		{"{name: X, from_env: X, from_file: /x, hosts: [a.com]}", "exclusive"},
		{"{name: X, from_env: X}", "secrets[0].hosts: invalid value: required"},
		{"{name: 9X, from_env: X, hosts: [a.com]}", "secrets[0].name"},
		{"{name: X, from_env: X-Y, hosts: [a.com]}", "secrets[0].from_env"},
		{"{name: X, from_file: rel/x, hosts: [a.com]}", "must be an absolute path"},
		{"{name: X, from_env: X, hosts: [a.com, 'a b']}", "secrets[0].hosts[1]"},
		{"{name: X, from_env: X, hosts: ['a.com:99999']}", "bad port"},
	} {
		_, _, err := Parse("config.yaml", []byte("version: \"1\"\nsecrets:\n  - "+tc.entry+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.entry, err, tc.want)
		}
	}
	_, _, err := Parse("config.yaml", []byte("version: \"1\"\nsecrets:\n  - {name: X, from_env: X, hosts: [a.com]}\n  - {name: X, from_env: Y, hosts: [a.com]}\n"))
	if err == nil || !strings.Contains(err.Error(), "config.yaml:4: secrets[1].name: invalid value: secret X declared twice") {
		t.Error(err)
	}
}

func TestSecretValue(t *testing.T) {
	env := map[string]string{"TOK": "v1"}
	getenv := func(k string) string { return env[k] }
	if v, err := (Secret{Name: "A", FromEnv: "TOK"}).Value(getenv); err != nil || v != "v1" {
		t.Fatal(v, err)
	}
	if _, err := (Secret{Name: "A", FromEnv: "NOPE"}).Value(getenv); err == nil || !strings.Contains(err.Error(), "secret A: $NOPE is empty or unset") {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "tok")
	os.WriteFile(f, []byte("v2\n"), 0o600)
	if v, err := (Secret{Name: "A", FromFile: f}).Value(getenv); err != nil || v != "v2" {
		t.Fatal(v, err)
	}
	os.WriteFile(f, []byte("\n"), 0o600)
	if _, err := (Secret{Name: "A", FromFile: f}).Value(getenv); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatal(err)
	}
}
