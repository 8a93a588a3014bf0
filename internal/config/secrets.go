package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/secrets"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// SecretsKey is the top-level key of the org's secrets. It belongs to
// OrgOnlyKeys: a harness, remote content or a repository layer never
// declares secrets (a repository layer that sets it must be refused).
const SecretsKey = "secrets"

// OrgOnlyKeys are top-level config.yaml keys only the org config may set.
var OrgOnlyKeys = []string{SecretsKey}

// Secret is one entry of config.yaml secrets: the variable the sandbox
// sees (a placeholder), where the runner reads the real value, and the
// only destinations the value may reach (package secrets).
type Secret struct {
	Name     string
	FromEnv  string   // the runner's variable holding the value, or
	FromFile string   // an absolute file holding it (one trailing newline dropped)
	Hosts    []string // "host" or "host:port"
	// UpstreamCAFile, when set, is a PEM file of roots trusted (besides the
	// system's) for the upstream servers of every secret host.
	UpstreamCAFile string
	Line           int // of the entry in config.yaml
}

// Value reads the secret's real value on the runner; an unset variable,
// a missing or empty file is an error naming the secret and the fix.
func (s Secret) Value(getenv func(string) string) (string, error) {
	if s.FromEnv != "" {
		v := getenv(s.FromEnv)
		if v == "" {
			return "", fmt.Errorf("secret %s: $%s is empty or unset on the runner (config.yaml secrets from_env)", s.Name, s.FromEnv)
		}
		return v, nil
	}
	b, err := os.ReadFile(s.FromFile)
	if err != nil {
		return "", fmt.Errorf("secret %s: from_file: %w", s.Name, err)
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if v == "" {
		return "", fmt.Errorf("secret %s: from_file %s is empty", s.Name, s.FromFile)
	}
	return v, nil
}

// SecretByName is the declared secret called name.
func (c *Config) SecretByName(name string) (Secret, bool) {
	for _, s := range c.Secrets {
		if s.Name == name {
			return s, true
		}
	}
	return Secret{}, false
}

var _ yamlx.KeyChecker = (*secretYAML)(nil)

type secretYAML struct {
	Name           string   `yaml:"name"`
	FromEnv        string   `yaml:"from_env"`
	FromFile       string   `yaml:"from_file"`
	Hosts          []string `yaml:"hosts"`
	UpstreamCAFile string   `yaml:"upstream_ca_file"`
}

func (w *secretYAML) CheckKey(f *yamlx.Fields, key string) error {
	switch key {
	case "name":
		if err := secrets.CheckName(w.Name); err != nil {
			return f.Errorf(key, yamlx.ErrValue, "%v", err)
		}
	case "from_env":
		if !ValidEnvName(w.FromEnv) {
			return f.Errorf(key, yamlx.ErrValue, "%q is not an environment variable name", w.FromEnv)
		}
	case "from_file", "upstream_ca_file":
		v := w.FromFile
		if key == "upstream_ca_file" {
			v = w.UpstreamCAFile
		}
		if !filepath.IsAbs(v) {
			return f.Errorf(key, yamlx.ErrValue, "%q must be an absolute path", v)
		}
	case "hosts":
		for i, h := range w.Hosts {
			if err := secrets.ParseHost(h); err != nil {
				n, field := elem(f, key, i)
				return yamlx.Errorf(f.File, n, field, yamlx.ErrValue, "%v", err)
			}
		}
	case "":
		return w.add(f)
	}
	return nil
}

// add checks a complete secrets: entry and appends it.
func (w *secretYAML) add(f *yamlx.Fields) error {
	c := ctx(f).c
	req := func(field, msg string) error {
		return yamlx.Errorf(f.File, f.Node, f.Path+"."+field, yamlx.ErrValue, "%s", msg)
	}
	switch {
	case w.Name == "":
		return req("name", "required (the variable the sandbox sees)")
	case w.FromEnv == "" && w.FromFile == "":
		return req("from_env", "required: from_env or from_file (where the runner reads the value)")
	case w.FromEnv != "" && w.FromFile != "":
		return req("from_file", "from_env and from_file are exclusive")
	case len(w.Hosts) == 0:
		return req("hosts", "required (the only destinations the value may reach)")
	}
	if _, dup := c.SecretByName(w.Name); dup {
		return req("name", fmt.Sprintf("secret %s declared twice", w.Name))
	}
	c.Secrets = append(c.Secrets, Secret{Name: w.Name, FromEnv: w.FromEnv, FromFile: w.FromFile,
		Hosts: w.Hosts, UpstreamCAFile: w.UpstreamCAFile, Line: f.Node.Line})
	return nil
}

// ErrSecretNotDeclared marks a harness secret the org did not declare.
var ErrSecretNotDeclared = errors.New("secret not declared in config.yaml secrets")
