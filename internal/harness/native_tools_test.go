package harness

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

func TestNativeTools(t *testing.T) {
	h, err := Parse("h.yaml", []byte("agent: agents/a.md\nnative:\n  tools: [web_fetch]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h.Native.Tools, []string{"web_fetch"}) {
		t.Fatalf("native.tools = %q", h.Native.Tools)
	}
	if p := h.Pos("native.tools", "web_fetch"); p.Line != 3 {
		t.Errorf("origin of web_fetch: %+v", p)
	}
	// An unknown tool is an error at its own line.
	_, err = Parse("h.yaml", []byte("agent: agents/a.md\nnative:\n  tools:\n    - web_fetch\n    - shell\n"))
	if !errors.Is(err, yamlx.ErrValue) || !strings.Contains(err.Error(), "h.yaml:5") || !strings.Contains(err.Error(), `unknown native tool "shell"`) {
		t.Fatalf("unknown tool: %v", err)
	}
	// Unknown keys of native: are errors too (typos do not silently pass).
	if _, err := Parse("h.yaml", []byte("agent: a.md\nnative:\n  tool: [web_fetch]\n")); err == nil {
		t.Fatal("native.tool accepted")
	}
	// A forge overlay may not grant it.
	_, err = Parse("h.yaml", []byte("agent: a.md\nforge:\n  github:\n    native: {tools: [web_fetch]}\n"))
	if err == nil || !strings.Contains(err.Error(), "not allowed inside a forge overlay") {
		t.Fatalf("overlay native: %v", err)
	}
}

func TestNativeToolsMerge(t *testing.T) {
	files := baseTree()
	files["harness/root.yaml"] = "agent: agents/a.md\nnative: {tools: [web_fetch]}\n"
	files["harness/child.yaml"] = "base: harness/root.yaml\n"
	files["harness/plain.yaml"] = "agent: agents/a.md\n"
	d := tree(t, files)
	h, err := Load(filepath.Join(d, "harness/child.yaml"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h.Native.Tools, []string{"web_fetch"}) {
		t.Fatalf("inherited native.tools = %q", h.Native.Tools)
	}
	h, err = Load(filepath.Join(d, "harness/plain.yaml"), LoadOptions{})
	if err != nil || len(h.Native.Tools) != 0 {
		t.Fatalf("default native.tools = %q, %v", h.Native.Tools, err)
	}
}

// A remote layer (a remote top-level harness or a remote base) may not
// grant native tools.
func TestNativeToolsRemoteRefused(t *testing.T) {
	cfg := orgCfg(t, "https://github.com/o/")
	body := []byte("agent: ../agents/a.md#sha256=" + pin + "\nallowed_remote_resources: [https://github.com/o/lib/]\nnative:\n  tools: [web_fetch]\n")
	_, err := LoadRemote(context.Background(), remotePin(t, remoteURL, body), body, LoadOptions{Config: cfg})
	if !errors.Is(err, ErrRemoteNativeTools) || !strings.Contains(err.Error(), ":4") {
		t.Fatalf("remote harness: %v", err)
	}
	d := tree(t, baseTree())
	sum := ref.SHA256(body)
	p := write(t, d, "harness/local.yaml", "allowed_remote_resources: [https://github.com/o/lib/]\nbase: "+remoteURL+"#sha256="+string(sum)+"\n")
	_, err = Load(p, LoadOptions{Config: cfg, FetchBase: func(context.Context, ref.Ref) ([]byte, error) { return body, nil }})
	if !errors.Is(err, ErrRemoteNativeTools) {
		t.Fatalf("remote base: %v", err)
	}
	// The local harness using that base may grant it itself.
	body = []byte("agent: ../agents/a.md#sha256=" + pin + "\n")
	sum = ref.SHA256(body)
	p = write(t, d, "harness/local.yaml", "allowed_remote_resources: [https://github.com/o/lib/]\nbase: "+remoteURL+"#sha256="+string(sum)+"\nnative: {tools: [web_fetch]}\n")
	h, err := Load(p, LoadOptions{Config: cfg, FetchBase: func(context.Context, ref.Ref) ([]byte, error) { return body, nil }})
	if err != nil || !slices.Equal(h.Native.Tools, []string{"web_fetch"}) {
		t.Fatalf("local grant over a remote base: %v %v", err, h)
	}
}
