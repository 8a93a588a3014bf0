package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
)

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"code", "code-implementation", "a.b_c", "X1"} {
		if err := runtime.CheckName("skill", ok); err != nil {
			t.Errorf("%q rejected: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "-x", "a/b", "../x", "a b", "é", strings.Repeat("a", 129)} {
		if err := runtime.CheckName("skill", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestCheckOptions(t *testing.T) {
	if err := runtime.CheckOptions("x", map[string]string{"a": "1"}, "a", "b"); err != nil {
		t.Fatal(err)
	}
	err := runtime.CheckOptions("x", map[string]string{"a": "1", "c": "2"}, "a", "b")
	if err == nil || err.Error() != `runtime x: options: unknown option "c" (known: a, b)` {
		t.Fatalf("err = %v", err)
	}
}

func TestFullPromptAndTruncate(t *testing.T) {
	in := runtime.RunInput{Prompt: "P", Iteration: 1, ResultPath: "/sandbox/r.json"}
	if in.FullPrompt() != "P" {
		t.Fatalf("first iteration prompt %q", in.FullPrompt())
	}
	in.Iteration, in.Feedback = 2, "/a: missing\n"
	p := in.FullPrompt()
	if !strings.HasPrefix(p, "P\n\n") || !strings.Contains(p, "(iteration 1) failed validation:\n/a: missing\n") || !strings.Contains(p, "/sandbox/r.json") {
		t.Fatalf("feedback prompt %q", p)
	}
	long := strings.Repeat("é", runtime.MaxEventText)
	tr := runtime.Truncate(long)
	if !utf8.ValidString(tr) || !strings.Contains(tr, "bytes cut]") || len(tr) > runtime.MaxEventText+32 {
		t.Fatalf("truncate: valid=%v len=%d", utf8.ValidString(tr), len(tr))
	}
	if runtime.Truncate("short") != "short" {
		t.Fatal("short text changed")
	}
	var got []runtime.Event
	in.Events = func(e runtime.Event) { got = append(got, e) }
	in.Emit(runtime.Event{Kind: runtime.EventText})
	if len(got) != 1 || got[0].Time.IsZero() {
		t.Fatalf("Emit: %+v", got)
	}
}

func TestLastLine(t *testing.T) {
	for _, c := range []struct {
		bufs [][]byte
		want string
	}{
		{nil, ""},
		{[][]byte{nil, []byte(" \n\t\n")}, ""},
		{[][]byte{[]byte("one line")}, "one line"},
		{[][]byte{[]byte("first\nsecond\n  last  \n\n")}, "  last"},
		{[][]byte{[]byte("\n \n"), []byte("out 1\nout 2\n")}, "out 2"},
		{[][]byte{[]byte("err\n"), []byte("out\n")}, "err"},
		{[][]byte{[]byte("a\r\nb\r\n")}, "b"},
	} {
		if got := runtime.LastLine(c.bufs...); got != c.want {
			t.Errorf("LastLine(%q) = %q, want %q", c.bufs, got, c.want)
		}
	}
}

// Skills and plugins are checked by name (CheckName, unique per kind)
// before anything is uploaded, then uploaded to skills/ and plugins/.
func TestUploadConfigSkillsAndPlugins(t *testing.T) {
	host := t.TempDir()
	agent := filepath.Join(host, "a.md")
	for p, body := range map[string]string{agent: "agent", filepath.Join(host, "s", "SKILL.md"): "skill", filepath.Join(host, "p", "plugin.json"): "plugin"} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sk := func(name string) runtime.Skill { return runtime.Skill{Name: name, HostDir: filepath.Join(host, "s")} }
	pl := func(name string) runtime.Plugin { return runtime.Plugin{Name: name, HostDir: filepath.Join(host, "p")} }
	for _, c := range []struct {
		name    string
		skills  []runtime.Skill
		plugins []runtime.Plugin
		wantErr string
	}{
		{"skill twice", []runtime.Skill{sk("x"), sk("y"), sk("x")}, nil, `skill "x": listed twice`},
		{"plugin twice", nil, []runtime.Plugin{pl("x"), pl("x")}, `plugin "x": listed twice`},
		{"bad skill name", []runtime.Skill{sk("../x")}, []runtime.Plugin{pl("..")}, `skill name "../x"`},
		{"bad plugin name", []runtime.Skill{sk("x")}, []runtime.Plugin{pl("a/b")}, `plugin name "a/b"`},
		{"skill checked before plugins", []runtime.Skill{sk("x"), sk("x")}, []runtime.Plugin{pl("..")}, `skill "x": listed twice`},
		{"same name in both kinds", []runtime.Skill{sk("x")}, []runtime.Plugin{pl("x")}, ""},
	} {
		s := runtimetest.NewSession(t)
		err := runtime.UploadConfig(context.Background(), s, runtime.ClaudeConfigDir, runtime.BootstrapInput{AgentName: "a", AgentFile: agent, Skills: c.skills, Plugins: c.plugins})
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: %v, want %q", c.name, err, c.wantErr)
			}
			if _, statErr := os.Stat(s.HostPath(runtime.ClaudeConfigDir + "/agents/a.md")); statErr == nil {
				t.Errorf("%s: agent uploaded before the names were checked", c.name)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for p, want := range map[string]string{"/agents/a.md": "agent", "/skills/x/SKILL.md": "skill", "/plugins/x/plugin.json": "plugin"} {
			if got := string(s.ReadFile(t, runtime.ClaudeConfigDir+p)); got != want {
				t.Errorf("%s: %s = %q, want %q", c.name, p, got, want)
			}
		}
	}
}

func TestUploadConfigAndFiles(t *testing.T) {
	s := runtimetest.NewSession(t)
	ctx := context.Background()
	err := runtime.UploadConfig(ctx, s, runtime.ClaudeConfigDir, runtime.BootstrapInput{AgentName: "a"})
	if err == nil || !strings.Contains(err.Error(), "no agent definition file") {
		t.Fatalf("missing agent file: %v", err)
	}
	err = runtime.UploadConfig(ctx, s, runtime.ClaudeConfigDir, runtime.BootstrapInput{AgentName: "../a", AgentFile: "/x"})
	if err == nil || !strings.Contains(err.Error(), `agent name "../a"`) {
		t.Fatalf("bad agent name: %v", err)
	}
	if err := runtime.WriteFile(ctx, s, "/sandbox/workspace/deep/x.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	b, ok, err := runtime.ReadFile(ctx, s, "/sandbox/workspace/deep/x.json")
	if err != nil || !ok || string(b) != "{}" {
		t.Fatalf("ReadFile: %q %v %v", b, ok, err)
	}
	if err := runtime.RemoveFile(ctx, s, "/sandbox/workspace/deep/x.json"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := runtime.ReadFile(ctx, s, "/sandbox/workspace/deep/x.json"); ok {
		t.Fatal("file still there after RemoveFile")
	}
	if err := runtime.RemoveFile(ctx, s, "/sandbox/workspace/deep/x.json"); err != nil {
		t.Fatalf("RemoveFile of a missing file: %v", err)
	}
	if (runtime.BootstrapInput{}).WorkDir() != runtime.WorkspaceDir || (runtime.BootstrapInput{RepoDir: "/sandbox/workspace/r"}).WorkDir() != "/sandbox/workspace/r" {
		t.Fatal("WorkDir")
	}
}
