package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1048576": 1 << 20, "1K": 1000, "1Ki": 1024, "1KiB": 1024, "64Mi": 64 << 20,
		"64MiB": 64 << 20, "500M": 500e6, "500MB": 500e6, "2G": 2e9, "2Gi": 2 << 30, "4GiB": 4 << 30, "10B": 10, " 3 Gi ": 3 << 30,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "k", "1k", "1kb", "-1", "1.5G", "Gi", "1 0", "9999999999Ti", "1Gib"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
	for _, n := range []int64{1, 1000, 1024, 4 << 30, 64 << 20, 3<<30 + 1} {
		if got, err := ParseSize(FormatSize(n)); err != nil || got != n {
			t.Errorf("round trip %d: %q -> %d, %v", n, FormatSize(n), got, err)
		}
	}
}

func TestSandboxLimits(t *testing.T) {
	c, _, err := Parse("config.yaml", []byte("sandbox:\n  limits:\n    memory: 2GiB\n    pids: 256\n    cpus: 1.5\n    tmp_size: 256Mi\n    snapshot_size: 128MiB\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultLimits()
	want.MemoryBytes, want.Pids, want.CPUs, want.TmpBytes, want.SnapshotBytes = 2<<30, 256, 1.5, 256<<20, 128<<20
	if c.Sandbox.Limits != want {
		t.Fatalf("limits = %+v, want %+v", c.Sandbox.Limits, want)
	}
	if d := Default().Sandbox.Limits; d != (Limits{MemoryBytes: 4 << 30, Pids: 1024, CPUs: 2, TmpBytes: 1 << 30, WorkspaceBytes: 10 << 30, OutputBytes: 64 << 20, OutputFiles: 10000, SnapshotBytes: 1 << 30}) {
		t.Fatalf("defaults = %+v", d)
	}
	for body, line := range map[string]string{
		"sandbox:\n  limits:\n    disk: 1Gi\n":              "config.yaml:3: sandbox.limits.disk: unknown field",
		"sandbox:\n  limits:\n    memory: big\n":            "config.yaml:3: sandbox.limits.memory:",
		"sandbox:\n  limits:\n    pids: -4\n":               "config.yaml:3: sandbox.limits.pids:",
		"sandbox:\n  limits:\n    cpus: 0\n":                "config.yaml:3: sandbox.limits.cpus:",
		"sandbox:\n  limits:\n    output_size: 0\n":         "config.yaml:3: sandbox.limits.output_size:",
		"sandbox:\n  limits:\n    output_files: 0\n":        "config.yaml:3: sandbox.limits.output_files:",
		"sandbox:\n  limits:\n    snapshot_size: 0\n":       "config.yaml:3: sandbox.limits.snapshot_size:",
		"sandbox:\n  limits:\n    output_files: 1Ki\n":      "config.yaml:3: sandbox.limits.output_files:",
		"sandbox:\n  limits:\n    output_files: 99999999\n": "config.yaml:3: sandbox.limits.output_files:",
	} {
		_, _, err := Parse("config.yaml", []byte(body))
		if err == nil || !strings.HasPrefix(err.Error(), line) {
			t.Errorf("%q: err = %v, want prefix %q", body, err, line)
		}
	}
}

func TestLimitsLowerAndMin(t *testing.T) {
	org := DefaultLimits()
	h := Limits{MemoryBytes: 1 << 30, CPUs: 4}
	if k := Exceeds(org, h); k != "cpus" {
		t.Fatalf("Exceeds = %q", k)
	}
	got := org.Lower(h)
	if got.MemoryBytes != 1<<30 || got.CPUs != 2 || got.Pids != sandbox.DefaultPids {
		t.Fatalf("Lower = %+v", got)
	}
	m := Limits{MemoryBytes: 2, CPUs: 1}.Min(Limits{MemoryBytes: 1, Pids: 5, CPUs: 0.5})
	if m != (Limits{MemoryBytes: 1, Pids: 5, CPUs: 0.5}) {
		t.Fatalf("Min = %+v", m)
	}
	if m := (Limits{CPUs: 1}).Min(Limits{}); m.CPUs != 1 {
		t.Fatalf("Min keeps a set value over an unset one: %+v", m)
	}
}

func TestAllowedEnvNames(t *testing.T) {
	c, _, err := Parse("config.yaml", []byte("security:\n  allowed_env_names: [PATH, NODE_OPTIONS]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckEnvName("PATH"); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckEnvName("LD_PRELOAD"); !errors.Is(err, ErrEnvRefused) || !strings.Contains(err.Error(), "LD_PRELOAD (matches LD_*)") {
		t.Fatalf("LD_PRELOAD: %v", err)
	}
	if _, _, err := Parse("config.yaml", []byte("security:\n  allowed_env_names: [\"A-B\"]\n")); !errors.Is(err, yamlx.ErrValue) {
		t.Fatalf("bad name: %v", err)
	}
	for name, want := range map[string]string{
		"LD_PRELOAD": "LD_*", "PATH": "PATH", "GIT_DIR": "GIT_*", "GIT_AUTHOR_DATE": "", "http_proxy": "*_PROXY",
		"HTTP_PROXY": "*_PROXY", "Http_Proxy": "", "PYTHONHOME": "PYTHON*", "HOME": "", "ENVX": "", "BASH_FUNC_x": "BASH_FUNC_*",
	} {
		if got := RefusedEnvPattern(name); got != want {
			t.Errorf("RefusedEnvPattern(%q) = %q, want %q", name, got, want)
		}
	}
}
