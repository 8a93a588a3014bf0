package runtimetest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

func TestExecMapsPaths(t *testing.T) {
	s := NewSession(t)
	ctx := context.Background()
	s.WriteFile(t, "/sandbox/workspace/a.txt", []byte("hello\n"))
	var live bytes.Buffer
	res, err := s.Exec(ctx, sandbox.ExecRequest{
		Args:   []string{"sh", "-c", `cat /sandbox/workspace/a.txt; echo "$X"; pwd`},
		Env:    map[string]string{"X": "/sandbox/claude-config"},
		Cwd:    "/sandbox/workspace",
		Stdout: &live,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exec: %v %+v", err, res)
	}
	want := "hello\n/sandbox/claude-config\n/sandbox/workspace\n"
	if string(res.Stdout) != want || live.String() != want {
		t.Fatalf("stdout %q live %q, want %q", res.Stdout, live.String(), want)
	}
	// a path that merely starts with "sandbox" letters is not rewritten
	if got := s.HostPath("/sandboxes/x"); got != "/sandboxes/x" {
		t.Fatalf("HostPath rewrote a non-boundary prefix: %s", got)
	}
}

func TestExecStatusesAndMounts(t *testing.T) {
	s := NewSession(t)
	ctx := context.Background()
	res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"sh", "-c", "exit 3"}})
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("exit 3: %v %+v", err, res)
	}
	res, err = s.Exec(ctx, sandbox.ExecRequest{Args: []string{"no-such-program-xyz"}})
	if err != nil || res.ExitCode != 127 {
		t.Fatalf("missing program: %v %+v", err, res)
	}
	res, err = s.Exec(ctx, sandbox.ExecRequest{Args: []string{"sleep", "5"}, Timeout: 50 * time.Millisecond})
	if err != nil || !res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("timeout: %v %+v", err, res)
	}
	stub := WriteScript(t, "fullsend", `echo "stub $*"`)
	s.Mount("/usr/local/bin/fullsend", stub)
	res, err = s.Exec(ctx, sandbox.ExecRequest{Args: []string{"/usr/local/bin/fullsend", "x"}})
	if err != nil || string(res.Stdout) != "stub x\n" {
		t.Fatalf("mounted stub: %v %+v", err, res)
	}
	s.AddBinary(t, "claude", stub)
	res, err = s.Exec(ctx, sandbox.ExecRequest{Args: []string{"claude", "-p"}})
	if err != nil || string(res.Stdout) != "stub -p\n" {
		t.Fatalf("PATH binary: %v %+v", err, res)
	}
}

func TestUploadDownloadTerminate(t *testing.T) {
	s := NewSession(t)
	ctx := context.Background()
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "sub", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Upload(ctx, src, "/sandbox/claude-config/skills/demo"); err != nil {
		t.Fatal(err)
	}
	if got := string(s.ReadFile(t, "/sandbox/claude-config/skills/demo/sub/f")); got != "x" {
		t.Fatalf("uploaded content %q", got)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if err := s.Download(ctx, "/sandbox/claude-config/skills/demo", dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "sub", "f")); string(b) != "x" {
		t.Fatalf("downloaded content %q", b)
	}
	if err := s.Terminate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"true"}}); err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Fatalf("exec after terminate: %v", err)
	}
}
