package execops

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// call is what a fake Run was given.
type call struct {
	args    []string
	env     map[string]string
	cwd     string
	timeout time.Duration
	stdin   []byte
}

// fake is a Run that records its call, reads stdin to the end, then runs
// do (if set) with the output writers.
type fake struct {
	calls []call
	do    func(stdout, stderr io.Writer) (int, bool, error)
}

func (f *fake) run(ctx context.Context, args []string, env map[string]string, cwd string, timeout time.Duration, stdin io.Reader, stdout, stderr io.Writer) (int, bool, error) {
	c := call{args: args, env: env, cwd: cwd, timeout: timeout}
	if stdin != nil {
		c.stdin, _ = io.ReadAll(stdin)
	}
	f.calls = append(f.calls, c)
	if f.do == nil {
		return 0, false, nil
	}
	return f.do(stdout, stderr)
}

func TestExecStdinAndTimeout(t *testing.T) {
	for _, tc := range []struct {
		name        string
		req         sandbox.ExecRequest
		wantStdin   string
		wantTimeout time.Duration
	}{
		{"Stdin wins", sandbox.ExecRequest{Args: []string{"cat"}, Stdin: []byte("bytes"), StdinReader: strings.NewReader("reader")}, "bytes", time.Minute},
		{"StdinReader", sandbox.ExecRequest{Args: []string{"cat"}, StdinReader: strings.NewReader("reader")}, "reader", time.Minute},
		{"own timeout", sandbox.ExecRequest{Args: []string{"cat"}, Timeout: time.Second}, "", time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{}
			o := Ops{Name: "test sandbox x", Run: f.run, Limits: sandbox.Limits{WallTime: time.Minute, OutputBytes: 100}}
			if _, err := o.Exec(context.Background(), tc.req); err != nil {
				t.Fatal(err)
			}
			c := f.calls[0]
			if string(c.stdin) != tc.wantStdin || c.timeout != tc.wantTimeout {
				t.Errorf("Run got stdin %q timeout %v, want %q %v", c.stdin, c.timeout, tc.wantStdin, tc.wantTimeout)
			}
		})
	}
}

func TestExecResult(t *testing.T) {
	var live bytes.Buffer
	f := &fake{do: func(stdout, stderr io.Writer) (int, bool, error) {
		stdout.Write([]byte("out"))
		stderr.Write([]byte("err"))
		return 3, true, nil
	}}
	kills := int64(0)
	o := Ops{Name: "test sandbox x", Run: f.run, Limits: sandbox.Limits{OutputBytes: 100}, OOMKills: func() int64 { kills++; return kills }}
	env := map[string]string{"A": "1"}
	res, err := o.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"x"}, Env: env, Cwd: "/w", Stdout: &live})
	if err != nil {
		t.Fatal(err)
	}
	want := sandbox.ExecResult{Stdout: []byte("out"), Stderr: []byte("err"), ExitCode: 3, TimedOut: true, OOMKilled: true}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("result %+v, want %+v", res, want)
	}
	if live.String() != "out" {
		t.Errorf("live stdout %q", live.String())
	}
	if c := f.calls[0]; !reflect.DeepEqual(c.args, []string{"x"}) || !reflect.DeepEqual(c.env, env) || c.cwd != "/w" || c.stdin != nil {
		t.Errorf("Run got %+v", c)
	}
	o.OOMKills = func() int64 { return 7 }
	if res, _ := o.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"x"}}); res.OOMKilled {
		t.Error("OOMKilled with an unchanged count")
	}
}

func TestExecRunError(t *testing.T) {
	boom := errors.New("boom")
	f := &fake{do: func(io.Writer, io.Writer) (int, bool, error) { return 0, false, boom }}
	o := Ops{Name: "test sandbox x", Run: f.run, Limits: sandbox.Limits{OutputBytes: 100}}
	if _, err := o.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"x"}}); err != boom {
		t.Errorf("err %v, want Run's error as is", err)
	}
}

func TestExecOutputLimit(t *testing.T) {
	f := &fake{do: func(stdout, stderr io.Writer) (int, bool, error) {
		stdout.Write([]byte("123456"))
		_, err := stderr.Write([]byte("abcdef"))
		return 137, false, err
	}}
	o := Ops{Name: "test sandbox x", Run: f.run, Limits: sandbox.Limits{OutputBytes: 10}, OOMKills: func() int64 { return int64(len(f.calls)) }}
	res, err := o.Exec(context.Background(), sandbox.ExecRequest{Args: []string{"yes"}})
	if !errors.Is(err, sandbox.ErrOutputLimit) || !strings.HasPrefix(err.Error(), "test sandbox x: exec yes: ") {
		t.Fatalf("err %v, want the output limit", err)
	}
	if string(res.Stdout) != "123456" || string(res.Stderr) != "abcd" || res.ExitCode != 137 || res.OOMKilled {
		t.Errorf("result %+v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := o.Exec(ctx, sandbox.ExecRequest{Args: []string{"yes"}}); errors.Is(err, sandbox.ErrOutputLimit) {
		t.Errorf("canceled exec: %v, want Run's error", err)
	}
}

func TestUpload(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fake{}
	o := Ops{Name: "test sandbox x", Run: f.run, Extract: func(parent, base string) []string { return []string{"extract", parent, base} }}
	if err := o.Upload(context.Background(), dir, "/a/b//c/"); err != nil {
		t.Fatal(err)
	}
	c := f.calls[0]
	if !reflect.DeepEqual(c.args, []string{"extract", "/a/b/", "c"}) || c.cwd != "/" || c.timeout != 0 {
		t.Errorf("Run got %+v", c)
	}
	tr := tar.NewReader(bytes.NewReader(c.stdin))
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	if !reflect.DeepEqual(names, []string{"c", "c/f"}) {
		t.Errorf("stream entries %q", names)
	}

	if err := o.Upload(context.Background(), dir, "rel"); !errors.Is(err, sandbox.ErrInvalidSpec) {
		t.Errorf("relative path: %v", err)
	}
	f.do = func(_, stderr io.Writer) (int, bool, error) {
		stderr.Write([]byte("no space\n"))
		return 2, false, nil
	}
	err := o.Upload(context.Background(), dir, "/a/c")
	if err == nil || err.Error() != "test sandbox x: upload to /a/c: tar exit 2: no space" {
		t.Errorf("failed extract: %v", err)
	}
	boom := errors.New("boom")
	f.do = func(io.Writer, io.Writer) (int, bool, error) { return 0, false, boom }
	if err := o.Upload(context.Background(), dir, "/a/c"); !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "test sandbox x: upload to /a/c: ") {
		t.Errorf("Run error: %v", err)
	}
}

// tarOf is a stream as `tar -c -C PARENT base` writes it: base/ and base/f.
func tarOf(t *testing.T, content string) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "base/", Mode: 0o755})
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "base/f", Mode: 0o644, Size: int64(len(content))})
	tw.Write([]byte(content))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDownload(t *testing.T) {
	stream := tarOf(t, "data")
	f := &fake{do: func(stdout, _ io.Writer) (int, bool, error) {
		_, err := stdout.Write(stream)
		return 0, false, err
	}}
	o := Ops{Name: "test sandbox x", Run: f.run, Limits: sandbox.Limits{OutputBytes: 1 << 20}}
	dst := filepath.Join(t.TempDir(), "out")
	if err := o.Download(context.Background(), "/a//base/", dst); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dst, "f")); err != nil || string(got) != "data" {
		t.Errorf("downloaded f: %q %v", got, err)
	}
	if c := f.calls[0]; !reflect.DeepEqual(c.args, []string{"tar", "-c", "-f", "-", "-C", "/a/", "base"}) || c.cwd != "/" {
		t.Errorf("Run got %+v", c)
	}

	if err := o.Download(context.Background(), "/a/../b", dst); !errors.Is(err, sandbox.ErrInvalidSpec) {
		t.Errorf("path with ..: %v", err)
	}
	o.Limits.OutputBytes = 3
	err := o.Download(context.Background(), "/a/base", filepath.Join(t.TempDir(), "big"))
	if !errors.Is(err, sandbox.ErrOutputLimit) || !strings.HasPrefix(err.Error(), "test sandbox x: download /a/base: ") {
		t.Errorf("over the limit: %v", err)
	}
	o.Limits.OutputBytes = 1 << 20
	f.do = func(_, stderr io.Writer) (int, bool, error) {
		stderr.Write([]byte(" gone \n"))
		return 2, false, nil
	}
	err = o.Download(context.Background(), "/a/base", filepath.Join(t.TempDir(), "x"))
	if err == nil || err.Error() != "test sandbox x: download /a/base: tar exit 2: gone" {
		t.Errorf("failed tar: %v", err)
	}
}
