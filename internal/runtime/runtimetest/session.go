package runtimetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// Session is a fake sandbox.Session rooted in a host temp dir.
type Session struct {
	root   string // host dir standing in for /sandbox
	binDir string // prepended to PATH

	mu         sync.Mutex
	mounts     map[string]string // sandbox prefix -> host path
	execs      []sandbox.ExecRequest
	terminated bool
	// BaseEnv is the environment every command starts from (the "Spec.Env").
	BaseEnv map[string]string
}

var _ sandbox.Session = (*Session)(nil)

// NewSession creates a session whose /sandbox is a fresh t.TempDir().
func NewSession(t testing.TB) *Session {
	t.Helper()
	root := t.TempDir()
	s := &Session{root: root, binDir: filepath.Join(t.TempDir(), "bin"), mounts: map[string]string{}}
	if err := os.MkdirAll(s.binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	s.BaseEnv = map[string]string{"HOME": "/sandbox", "LANG": "C.UTF-8"}
	t.Cleanup(func() { _ = s.Terminate(context.Background()) })
	return s
}

// Root is the host directory standing in for /sandbox.
func (s *Session) Root() string { return s.root }

// HostPath maps a sandbox path to the host path behind it.
func (s *Session) HostPath(sandboxPath string) string {
	return s.mapString(sandboxPath)
}

// Mount maps the sandbox path prefix to hostPath (file or directory), e.g.
// Mount("/usr/local/bin/fullsend", stub).
func (s *Session) Mount(sandboxPath, hostPath string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mounts[sandboxPath] = hostPath
}

// AddBinary makes hostPath runnable as name through PATH.
func (s *Session) AddBinary(t testing.TB, name, hostPath string) {
	t.Helper()
	if err := os.Symlink(hostPath, filepath.Join(s.binDir, name)); err != nil {
		t.Fatal(err)
	}
}

// WriteFile writes a file at a sandbox path (parents created).
func (s *Session) WriteFile(t testing.TB, sandboxPath string, data []byte) {
	t.Helper()
	p := s.HostPath(sandboxPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadFile reads a file at a sandbox path.
func (s *Session) ReadFile(t testing.TB, sandboxPath string) []byte {
	t.Helper()
	b, err := os.ReadFile(s.HostPath(sandboxPath))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Execs returns the requests Exec received so far (arguments unmapped).
func (s *Session) Execs() []sandbox.ExecRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sandbox.ExecRequest(nil), s.execs...)
}

// ID implements sandbox.Session.
func (s *Session) ID() string { return "runtimetest-" + filepath.Base(s.root) }

// mapString rewrites sandbox path prefixes inside s to host paths.
func (s *Session) mapString(str string) string {
	s.mu.Lock()
	prefixes := make([]string, 0, len(s.mounts)+1)
	mounts := make(map[string]string, len(s.mounts))
	for p, h := range s.mounts {
		prefixes = append(prefixes, p)
		mounts[p] = h
	}
	s.mu.Unlock()
	// longest prefix first
	sort.Slice(prefixes, func(i, j int) bool { return len(prefixes[i]) > len(prefixes[j]) })
	prefixes = append(prefixes, "/sandbox")
	var b strings.Builder
	for i := 0; i < len(str); {
		matched := false
		if i == 0 || !pathChar(str[i-1]) {
			for _, p := range prefixes {
				if strings.HasPrefix(str[i:], p) {
					end := i + len(p)
					if end == len(str) || !pathChar(str[end]) || str[end] == '/' {
						if p == "/sandbox" {
							b.WriteString(s.root)
						} else {
							b.WriteString(mounts[p])
						}
						i = end
						matched = true
						break
					}
				}
			}
		}
		if !matched {
			b.WriteByte(str[i])
			i++
		}
	}
	return b.String()
}

func pathChar(c byte) bool {
	return c == '/' || c == '.' || c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// unmap turns host root paths in output back into /sandbox paths.
func (s *Session) unmap(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte(s.root), []byte("/sandbox"))
}

type unmapWriter struct {
	s *Session
	w io.Writer
}

func (u unmapWriter) Write(p []byte) (int, error) {
	if _, err := u.w.Write(u.s.unmap(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (s *Session) alive() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.terminated {
		return fmt.Errorf("session %s: terminated", s.ID())
	}
	return nil
}

// Exec implements sandbox.Session: runs r.Args on the host with mapped
// paths. A missing program yields exit status 127 (as a shell would); a
// timeout yields ExitCode -1 and TimedOut.
func (s *Session) Exec(ctx context.Context, r sandbox.ExecRequest) (sandbox.ExecResult, error) {
	if err := s.alive(); err != nil {
		return sandbox.ExecResult{}, err
	}
	if len(r.Args) == 0 {
		return sandbox.ExecResult{}, errors.New("exec: no arguments")
	}
	s.mu.Lock()
	s.execs = append(s.execs, r)
	s.mu.Unlock()

	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	args := make([]string, len(r.Args))
	for i, a := range r.Args {
		args[i] = s.mapString(a)
	}
	env, envList := s.execEnv(r)

	prog := args[0]
	if !strings.Contains(prog, "/") {
		if lp, err := lookPath(prog, env["PATH"]); err == nil {
			prog = lp
		} else {
			msg := fmt.Sprintf("%s: command not found\n", r.Args[0])
			if r.Stderr != nil {
				_, _ = io.WriteString(r.Stderr, msg)
			}
			return sandbox.ExecResult{Stderr: []byte(msg), ExitCode: 127}, nil
		}
	}
	cmd := exec.Command(prog, args[1:]...)
	cmd.Args[0] = args[0]
	cmd.Env = envList
	cmd.Dir = s.root
	if r.Cwd != "" {
		cmd.Dir = s.mapString(r.Cwd)
	}
	ownGroup(cmd)
	if r.Stdin != nil {
		cmd.Stdin = bytes.NewReader(r.Stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if r.Stdout != nil {
		cmd.Stdout = io.MultiWriter(&stdout, unmapWriter{s, r.Stdout})
	}
	if r.Stderr != nil {
		cmd.Stderr = io.MultiWriter(&stderr, unmapWriter{s, r.Stderr})
	}
	if err := cmd.Start(); err != nil {
		return startFailure(r.Args[0], err)
	}
	return s.wait(ctx, cmd, r.Args[0], &stdout, &stderr)
}

// execEnv is the environment of a command: BaseEnv, then r.Env, with the
// session's bin directory first on PATH; env as a map and as the sorted
// NAME=value list with paths mapped.
func (s *Session) execEnv(r sandbox.ExecRequest) (map[string]string, []string) {
	env := map[string]string{}
	for k, v := range s.BaseEnv {
		env[k] = v
	}
	for k, v := range r.Env {
		env[k] = v
	}
	path := os.Getenv("PATH")
	if p, ok := env["PATH"]; ok {
		path = p
	}
	env["PATH"] = s.binDir + string(os.PathListSeparator) + s.mapString(path)
	envList := make([]string, 0, len(env))
	for k, v := range env {
		envList = append(envList, k+"="+s.mapString(v))
	}
	sort.Strings(envList)
	return env, envList
}

// startFailure is the result of a command that could not start: exit
// status 127 (not found) or 126 (not executable) as a shell gives, else
// an error.
func startFailure(name string, err error) (sandbox.ExecResult, error) {
	var pe *fs.PathError
	if errors.As(err, &pe) && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)) {
		code := 127
		if errors.Is(err, fs.ErrPermission) {
			code = 126
		}
		msg := fmt.Sprintf("%s: %v\n", name, pe.Err)
		return sandbox.ExecResult{Stderr: []byte(msg), ExitCode: code}, nil
	}
	return sandbox.ExecResult{}, fmt.Errorf("exec %s: %w", name, err)
}

// wait waits for a started command (killing its process group when ctx
// ends) and turns its end into an ExecResult: a timeout is ExitCode -1
// and TimedOut, a cancellation exit status 137 and ctx's error, a signal
// 128+N.
func (s *Session) wait(ctx context.Context, cmd *exec.Cmd, name string, stdout, stderr *bytes.Buffer) (sandbox.ExecResult, error) {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	timedOut := false
	select {
	case werr = <-done:
	case <-ctx.Done():
		killGroup(cmd)
		werr = <-done
		timedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
		if !timedOut {
			return sandbox.ExecResult{Stdout: s.unmap(stdout.Bytes()), Stderr: s.unmap(stderr.Bytes()), ExitCode: 137}, ctx.Err()
		}
	}
	res := sandbox.ExecResult{Stdout: s.unmap(stdout.Bytes()), Stderr: s.unmap(stderr.Bytes()), TimedOut: timedOut}
	switch {
	case timedOut:
		res.ExitCode = -1
	case werr == nil:
	default:
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			return res, fmt.Errorf("exec %s: %w", name, werr)
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ExitCode = 128 + int(ws.Signal())
		} else {
			res.ExitCode = ee.ExitCode()
		}
	}
	return res, nil
}

func lookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fs.ErrNotExist
}

// Upload implements sandbox.Session (file or tree; the target is replaced).
func (s *Session) Upload(_ context.Context, hostPath, sandboxPath string) error {
	if err := s.alive(); err != nil {
		return err
	}
	if !strings.HasPrefix(sandboxPath, "/") {
		return fmt.Errorf("upload to %q: sandbox path must be absolute", sandboxPath)
	}
	dst := s.mapString(sandboxPath)
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return copyTree(hostPath, dst)
}

// Download implements sandbox.Session (regular files and directories only).
func (s *Session) Download(_ context.Context, sandboxPath, hostPath string) error {
	if err := s.alive(); err != nil {
		return err
	}
	src := s.mapString(sandboxPath)
	if _, err := os.Lstat(src); err != nil {
		return fmt.Errorf("download %s: %w", sandboxPath, err)
	}
	return copyTree(src, hostPath)
}

// Terminate implements sandbox.Session; idempotent.
func (s *Session) Terminate(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.terminated = true
	return nil
}

// Terminated reports whether Terminate was called.
func (s *Session) Terminated() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.terminated
}

func copyTree(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if fi.Mode().IsRegular() {
		return copyFile(src, dst, fi.Mode().Perm())
	}
	if !fi.IsDir() {
		return nil
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case info.Mode().IsRegular():
			return copyFile(p, target, info.Mode().Perm())
		}
		return nil // symlinks and special files are skipped
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, perm)
}

// WriteScript writes an executable shell script into a temp dir and returns
// its host path (for fake binaries such as claude or fullsend).
func WriteScript(t testing.TB, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
