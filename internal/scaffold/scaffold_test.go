package scaffold

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
)

// settingLine is a commented-out setting of the scaffolded config.yaml: "#"
// directly followed by a key (top level) or by indentation. Prose comments
// are "# " followed by text.
var settingLine = regexp.MustCompile(`^#([a-z_]|  +[a-z_-])`)

// TestConfigDocumentsTheDefaults: uncommenting every setting of the
// scaffolded config.yaml must give exactly the built-in defaults (plus the
// agents entry it sets and runtime: claude, the run default), with no
// unknown key — so the file documents every default truthfully.
func TestConfigDocumentsTheDefaults(t *testing.T) {
	var data []byte
	for _, f := range Files() {
		if f.Path == "config.yaml" {
			data = f.Data
		}
	}
	if data == nil {
		t.Fatal("no config.yaml in the scaffold")
	}
	as := func(name string, data []byte) *config.Config {
		t.Helper()
		cfg, notices, err := config.Parse(name, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(notices) > 0 {
			t.Fatalf("%s: notices %v", name, notices)
		}
		return cfg
	}
	// As written.
	cfg := as("config.yaml", data)
	if len(cfg.Agents) != 1 || cfg.Agents[0].Source != Harness {
		t.Fatalf("agents = %+v, want %s", cfg.Agents, Harness)
	}
	// Every setting uncommented.
	var lines []string
	settings := 0
	for _, l := range strings.Split(string(data), "\n") {
		if settingLine.MatchString(l) {
			l = l[1:]
			settings++
		}
		lines = append(lines, l)
	}
	if settings < 30 {
		t.Fatalf("only %d commented settings found", settings)
	}
	got := as("config.yaml (uncommented)", []byte(strings.Join(lines, "\n")))
	want := config.Default()
	want.Agents = cfg.Agents
	want.Runtime = "claude"
	normalise(got)
	normalise(want)
	got.Path, want.Path = "", ""
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("uncommented config differs from the defaults:\n got %+v\nwant %+v", got, want)
	}
}

// normalise makes empty lists nil and an unset context-injection policy
// explicit (nil means on).
func normalise(c *config.Config) {
	if len(c.AllowedRemoteResources) == 0 {
		c.AllowedRemoteResources = nil
	}
	if len(c.Security.AllowedEnvNames) == 0 {
		c.Security.AllowedEnvNames = nil
	}
	r := &c.Security.RemoteResources
	if len(r.AllowedPrivateNetworks) == 0 {
		r.AllowedPrivateNetworks = nil
	}
	if len(r.TrustedHarnessPrefixes) == 0 {
		r.TrustedHarnessPrefixes = nil
	}
	on := true
	for _, p := range []*config.ScanPolicy{&c.Security.Scan.Local, &c.Security.Scan.Remote} {
		if p.ContextInjection == nil {
			p.ContextInjection = &on
		}
	}
}

// TestWriteRefusesToOverwrite: existing files are named and nothing is
// written; --force replaces them (a symlink in the way is replaced, not
// followed).
func TestWriteRefusesToOverwrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fs")
	written, err := Write(dir, false)
	if err != nil || len(written) != len(Files()) {
		t.Fatalf("first write: %v %v", written, err)
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte("version: \"1\"\n# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside.md")
	if err := os.WriteFile(outside, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(dir, "agents", "hello.md")
	os.Remove(agent)
	if err := os.Symlink(outside, agent); err != nil {
		t.Fatal(err)
	}
	_, err = Write(dir, false)
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "config.yaml") || !strings.Contains(err.Error(), "agents/hello.md") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(cfgPath); !strings.Contains(string(b), "# mine") {
		t.Fatal("refused write changed config.yaml")
	}
	if _, err := Write(dir, true); err != nil {
		t.Fatalf("--force: %v", err)
	}
	if b, _ := os.ReadFile(cfgPath); strings.Contains(string(b), "# mine") {
		t.Fatal("--force kept the old config.yaml")
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep me" {
		t.Fatal("--force wrote through a symlink")
	}
	if fi, err := os.Lstat(agent); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("agent after --force: %v %v", fi, err)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "agents"))
	if len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
}
