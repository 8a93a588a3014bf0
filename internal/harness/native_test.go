package harness

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// TestNativeFields: native.subagent_profiles and max_parallel_children
// decode with their defaults, and bad values are file:line errors.
func TestNativeFields(t *testing.T) {
	h, err := Parse("h.yaml", []byte("agent: a.md\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := h.EffectiveSubagentProfiles(); !slices.Equal(got, []string{"default"}) || h.EffectiveMaxParallelChildren() != 1 {
		t.Fatalf("defaults: %v %d", got, h.EffectiveMaxParallelChildren())
	}
	h, err = Parse("h.yaml", []byte("native:\n  subagent_profiles: [read_only, web_fetch]\n  max_parallel_children: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := h.EffectiveSubagentProfiles(); !slices.Equal(got, []string{"read_only", "web_fetch"}) || h.EffectiveMaxParallelChildren() != 3 {
		t.Fatalf("set: %v %d", got, h.EffectiveMaxParallelChildren())
	}
	h, err = Parse("h.yaml", []byte("native:\n  subagent_profiles: []\n"))
	if err != nil || h.EffectiveSubagentProfiles() == nil || len(h.EffectiveSubagentProfiles()) != 0 {
		t.Fatalf("empty list (no delegation): %v %v", h.EffectiveSubagentProfiles(), err)
	}
	for body, want := range map[string]string{
		"native:\n  subagent_profiles: [default, root]\n":                  `h.yaml:2: native.subagent_profiles[1]: invalid value: unknown profile "root"`,
		"native:\n  subagent_profiles: [default, default]\n":               `h.yaml:2: native.subagent_profiles[1]: invalid value: profile "default" listed twice`,
		"native:\n  max_parallel_children: 0\n":                            "h.yaml:2: native.max_parallel_children: invalid value: must be between 1 and 8",
		"native:\n  max_parallel_children: 9\n":                            "h.yaml:2: native.max_parallel_children: invalid value: must be between 1 and 8",
		"native:\n  tools: [x]\n  bogus: 1\n":                              "native.",
		"forge:\n  github:\n    native:\n      max_parallel_children: 2\n": "forge.github.native",
	} {
		_, err := Parse("h.yaml", []byte(body))
		var ye *yamlx.Error
		if err == nil || !errors.As(err, &ye) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", body, err, want)
		}
	}
}

// TestNativeMerge: a child's native keys win over its base's, key by key.
func TestNativeMerge(t *testing.T) {
	base, _ := Parse("b.yaml", []byte("native:\n  subagent_profiles: [default, read_only]\n  max_parallel_children: 4\n"))
	child, _ := Parse("c.yaml", []byte("native:\n  max_parallel_children: 2\n"))
	m := Merge(base, child)
	if got := m.EffectiveSubagentProfiles(); !slices.Equal(got, []string{"default", "read_only"}) || m.EffectiveMaxParallelChildren() != 2 {
		t.Fatalf("merged %v %d", got, m.EffectiveMaxParallelChildren())
	}
	child, _ = Parse("c.yaml", []byte("native:\n  subagent_profiles: []\n"))
	if m := Merge(base, child); len(m.EffectiveSubagentProfiles()) != 0 || m.EffectiveMaxParallelChildren() != 4 {
		t.Fatalf("merged %v %d", m.EffectiveSubagentProfiles(), m.EffectiveMaxParallelChildren())
	}
}

// TestRemoteNativeMayNotWiden: remote content may allow only the default
// and read_only profiles and one child at a time; a local harness may
// declare more over a remote base.
func TestRemoteNativeMayNotWiden(t *testing.T) {
	d := tree(t, baseTree())
	cfg := orgCfg(t, "https://github.com/o/")
	url := "https://github.com/o/lib/harness/base.yaml"
	load := func(body, local string) (*Harness, error) {
		b := []byte(body)
		child := "allowed_remote_resources: [https://github.com/o/lib/]\nbase: " + url + "#sha256=" + string(ref.SHA256(b)) + "\n" + local
		p := write(t, d, "harness/h.yaml", child)
		return Load(p, LoadOptions{Config: cfg, FetchBase: func(context.Context, ref.Ref) ([]byte, error) { return b, nil }})
	}
	for _, body := range []string{
		"agent: agents/a.md#sha256=" + pin + "\nnative:\n  subagent_profiles: [default, web_fetch]\n",
		"agent: agents/a.md#sha256=" + pin + "\nnative:\n  max_parallel_children: 2\n",
	} {
		_, err := load(body, "")
		if !errors.Is(err, ErrRemoteNative) || !strings.Contains(err.Error(), url+":3: native.") {
			t.Errorf("remote base %q: err = %v, want ErrRemoteNative at line 3", body, err)
		}
		b := []byte(body)
		if _, err := LoadRemote(context.Background(), remotePin(t, url, b), b, LoadOptions{Config: cfg}); !errors.Is(err, ErrRemoteNative) {
			t.Errorf("LoadRemote %q: err = %v", body, err)
		}
	}
	// Narrowing is fine remotely; the local harness may widen over it.
	h, err := load("agent: agents/a.md#sha256="+pin+"\nnative:\n  subagent_profiles: [read_only]\n  max_parallel_children: 1\n",
		"native:\n  subagent_profiles: [default, web_fetch]\n  max_parallel_children: 3\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := h.EffectiveSubagentProfiles(); !slices.Equal(got, []string{"default", "web_fetch"}) || h.EffectiveMaxParallelChildren() != 3 {
		t.Fatalf("local over remote: %v %d", got, h.EffectiveMaxParallelChildren())
	}
}
