package claude

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// elf writes a file that starts like an executable.
func elf(t *testing.T, p string) string {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte("\x7fELF\x02\x01\x01 native build"), 0o755))
	return p
}

func link(t *testing.T, target, p string) string {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.Symlink(target, p))
	return p
}

// TestLocate: each way Claude Code is installed resolves to the real file
// and read-only mounts; a CLI that cannot be used is one error saying
// where fullsend looked.
func TestLocate(t *testing.T) {
	d := t.TempDir()
	env := func(path string) func(string) string {
		return func(k string) string {
			if k == "PATH" {
				return path
			}
			return ""
		}
	}

	// The native installer: ~/.local/bin/claude -> versions/X (a symlink chain).
	native := elf(t, filepath.Join(d, "home/.local/share/claude/versions/2.1.330"))
	link(t, "../share/claude/versions/2.1.330", filepath.Join(d, "home/.local/bin/claude"))
	in, err := Locate("", env("relative/dir:"+filepath.Join(d, "nothing")+":"+filepath.Join(d, "home/.local/bin")))
	if err != nil {
		t.Fatal(err)
	}
	if in.Host != native || len(in.Mounts) != 1 || in.Mounts[0] != (sandbox.Mount{Source: native, Target: SandboxBinary, ReadOnly: true}) || in.Binary != SandboxBinary || in.NodeBinary != "" {
		t.Errorf("native install: %+v", in)
	}
	if o := in.Options(); o[OptBinary] != SandboxBinary || len(o) != 1 {
		t.Errorf("options %v", o)
	}

	// npm install --ignore-scripts: .bin/claude -> the placeholder; the
	// platform package beside it holds the native build.
	nm := filepath.Join(d, "prefix/node_modules")
	pkg := filepath.Join(nm, "@anthropic-ai/claude-code")
	must(t, os.MkdirAll(filepath.Join(pkg, "bin"), 0o755))
	must(t, os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@anthropic-ai/claude-code","version":"2.1.330"}`), 0o644))
	must(t, os.WriteFile(filepath.Join(pkg, "bin/claude.exe"), []byte("echo \"Error: claude native binary not installed.\" >&2\nexit 1\n"), 0o755))
	link(t, "../@anthropic-ai/claude-code/bin/claude.exe", filepath.Join(nm, ".bin/claude"))
	plat := elf(t, filepath.Join(nm, "@anthropic-ai/claude-code-"+platform(), "claude"))
	in, err = Locate(filepath.Join(nm, ".bin/claude"), env(""))
	if err != nil {
		t.Fatal(err)
	}
	if in.Host != plat || in.Mounts[0].Source != plat || !strings.Contains(in.Note, "placeholder") {
		t.Errorf("npm placeholder: %+v", in)
	}
	// Without the platform package: the reason and the fix.
	must(t, os.RemoveAll(filepath.Dir(plat)))
	if _, err := Locate(filepath.Join(nm, ".bin/claude"), env("")); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "postinstall") {
		t.Errorf("placeholder without a platform build: %v", err)
	}

	// A script install: cli.js with a node shebang, node on PATH.
	spkg := filepath.Join(d, "old/lib/node_modules/@anthropic-ai/claude-code")
	must(t, os.MkdirAll(spkg, 0o755))
	must(t, os.WriteFile(filepath.Join(spkg, "package.json"), []byte(`{"name":"@anthropic-ai/claude-code"}`), 0o644))
	must(t, os.WriteFile(filepath.Join(spkg, "cli.js"), []byte("#!/usr/bin/env node\nconsole.log(1)\n"), 0o755))
	link(t, "../lib/node_modules/@anthropic-ai/claude-code/cli.js", filepath.Join(d, "old/bin/claude"))
	node := elf(t, filepath.Join(d, "nodejs/bin/node"))
	in, err = Locate("claude", env(filepath.Join(d, "old/bin")+":"+filepath.Join(d, "nodejs/bin")))
	if err != nil {
		t.Fatal(err)
	}
	want := []sandbox.Mount{{Source: spkg, Target: SandboxPackage, ReadOnly: true}, {Source: node, Target: SandboxNode, ReadOnly: true}}
	if in.Node != node || len(in.Mounts) != 2 || in.Mounts[0] != want[0] || in.Mounts[1] != want[1] ||
		in.Binary != SandboxPackage+"/cli.js" || in.NodeBinary != SandboxNode {
		t.Errorf("script install: %+v", in)
	}

	// Refusals, each naming what it saw.
	wrapper := filepath.Join(d, "wrap/claude")
	must(t, os.MkdirAll(filepath.Dir(wrapper), 0o755))
	must(t, os.WriteFile(wrapper, []byte("#!/bin/sh\nexec /somewhere/claude \"$@\"\n"), 0o755))
	for _, c := range []struct {
		binary, path, want string
	}{
		{"", filepath.Join(d, "empty"), `looked for "claude" in PATH (` + filepath.Join(d, "empty") + `)`},
		{"claude-code", "/nonexistent", `looked for "claude-code" in PATH (/nonexistent)`},
		{filepath.Join(d, "missing/claude"), "", "no such file"},
		{wrapper, "", "neither an executable nor a node script"},
		{filepath.Join(d, "home"), "", "not a regular file"},
	} {
		_, err := Locate(c.binary, env(c.path))
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Locate(%q, PATH=%q) = %v, want %q", c.binary, c.path, err, c.want)
		}
	}
}
