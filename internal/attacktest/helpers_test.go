//go:build linux

package attacktest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/cli"
	"github.com/fullsend-ai/fullsend/internal/cli/clitest"
	"github.com/fullsend-ai/fullsend/internal/reexec"
	"github.com/fullsend-ai/fullsend/internal/sandbox/sandboxtest"
)

// TestMain: inside the sandbox this test binary is /usr/local/bin/fullsend
// (the runner binds the running executable there); it then acts as the CLI,
// or as a probe when FULLSEND_ATTACK_HELPER is set. On the host it moves
// TMPDIR to a private directory so that everything the runs leave behind
// there can be seen and counted.
func TestMain(m *testing.M) {
	// The sandbox roles first: a probe's command is started by them, with
	// FULLSEND_ATTACK_HELPER already in its environment.
	reexec.Main()
	if h := os.Getenv("FULLSEND_ATTACK_HELPER"); h != "" {
		os.Exit(probe(h, os.Args[1:]))
	}
	clitest.ActAsCLI("")
	tmp, err := os.MkdirTemp("", "fullsend-attacktest-")
	if err != nil {
		panic(err)
	}
	// Runs and the run key live in a private state directory (outside
	// the TMPDIR whose entries the suite counts).
	state, err := os.MkdirTemp("", "fullsend-attacktest-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	os.Setenv("TMPDIR", tmp)
	code := m.Run()
	os.RemoveAll(state)
	os.RemoveAll(tmp)
	os.Exit(code)
}

// needSandbox skips when the local sandbox cannot start here.
func needSandbox(t *testing.T) {
	t.Helper()
	if err := sandboxtest.Unavailable("local"); err != nil {
		t.Skipf("ATTACK SUITE SKIPPED: local sandbox unavailable: %v", err)
	}
}

// token returns a unique marker string for one test.
func token(t *testing.T) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "fsattack" + hex.EncodeToString(b[:])
}

// fullsend runs the CLI in process and returns its exit code and output.
func fullsend(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code := cli.Main(ctx, args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// writeTree writes files (relative path -> content; names ending in .sh
// are made executable) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, c := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(rel, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(c), mode); err != nil {
			t.Fatal(err)
		}
	}
}

const agentMD = "---\nname: hostile\ndescription: An agent that does what an injected prompt asks.\n---\n\nDo the task.\n"

const resultSchema = `{"type": "object", "required": ["status"], "properties": {"status": {"type": "string"}}}`

// project is a fullsend dir with a harness, an agent, a schema and a
// hostile agent script, plus a workspace for the cache and run dirs.
type project struct {
	t         *testing.T
	dir       string // fullsend dir
	workspace string
}

// newProject writes harness.yaml (harnessTail appended to the common
// fields), script.yaml and extra files.
func newProject(t *testing.T, harnessTail, script string, extra map[string]string) *project {
	t.Helper()
	root := t.TempDir()
	p := &project{t: t, dir: filepath.Join(root, "fs"), workspace: filepath.Join(root, "ws")}
	files := map[string]string{
		"agents/hostile.md":          agentMD,
		"schemas/result.schema.json": resultSchema,
		"harness.yaml": "agent: agents/hostile.md\nruntime: script\n" +
			"validation_loop:\n  schema: schemas/result.schema.json\n  max_iterations: 1\n" +
			"timeout_minutes: 2\n" + harnessTail,
		"script.yaml": script,
	}
	for k, v := range extra {
		files[k] = v
	}
	writeTree(t, p.dir, files)
	if err := os.MkdirAll(p.workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// run is `fullsend run` of the project's harness with the script runtime
// and no target repository.
func (p *project) run(extra ...string) (int, string, string) {
	p.t.Helper()
	args := []string{"--workspace", p.workspace, "--fullsend-dir", p.dir, "run", "--runtime", "script",
		"--script", filepath.Join(p.dir, "script.yaml"), "--target-repo", "none"}
	args = append(args, extra...)
	args = append(args, filepath.Join(p.dir, "harness.yaml"))
	return fullsend(p.t, args...)
}

// runDirs lists the run directories the project's runs left.
func (p *project) runDirs() []string {
	ents, _ := os.ReadDir(filepath.Join(p.workspace, ".fullsend", "runs"))
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, filepath.Join(p.workspace, ".fullsend", "runs", e.Name()))
		}
	}
	return out
}

// runOne runs the project, which must exit 0 and leave exactly one run
// directory, and returns that directory.
func (p *project) runOne() string {
	p.t.Helper()
	code, stdout, stderr := p.run()
	if code != 0 {
		p.t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	dirs := p.runDirs()
	if len(dirs) != 1 {
		p.t.Fatalf("run dirs %v", dirs)
	}
	return dirs[0]
}

// host is what the suite compares before and after an attack.
type host struct {
	tmpEntries map[string]bool
	tmpBytes   int64
}

// snapshotHost records the private TMPDIR (entries other than the tests'
// own temp dirs, and their total size).
func snapshotHost(t *testing.T) host {
	t.Helper()
	h := host{tmpEntries: map[string]bool{}}
	dir := os.TempDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "Test") {
			continue // t.TempDir of this suite's tests
		}
		h.tmpEntries[e.Name()] = true
		h.tmpBytes += treeSize(filepath.Join(dir, e.Name()))
	}
	return h
}

func treeSize(p string) int64 {
	var n int64
	filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// assertHostUnchanged checks that no marker file exists, that no process
// whose command line holds tok is alive, and that TMPDIR is back to before.
func assertHostUnchanged(t *testing.T, before host, tok string, markers ...string) {
	t.Helper()
	for _, m := range markers {
		if _, err := os.Lstat(m); err == nil {
			t.Errorf("ATTACK SUCCEEDED: marker %s exists on the host", m)
		}
	}
	// Teardown is synchronous, but give a killed process group a moment.
	deadline := time.Now().Add(5 * time.Second)
	for {
		procs := processesWith(tok)
		if len(procs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left on the host: %v", procs)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	after := snapshotHost(t)
	for name := range after.tmpEntries {
		if !before.tmpEntries[name] {
			t.Errorf("left in TMPDIR: %s", name)
		}
	}
	if after.tmpBytes > before.tmpBytes {
		t.Errorf("TMPDIR grew by %d bytes", after.tmpBytes-before.tmpBytes)
	}
}

// processesWith lists host processes whose command line contains tok.
func processesWith(tok string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range ents {
		pid := e.Name()
		if pid == "self" || pid == "thread-self" || pid[0] < '0' || pid[0] > '9' || pid == strconv.Itoa(self) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if err == nil && bytes.Contains(b, []byte(tok)) {
			out = append(out, pid+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// fileHas reports whether any regular file under dir contains s.
func fileHas(dir, s string) string {
	var found string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found != "" {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(s)) {
			found = p
		}
		return nil
	})
	return found
}
