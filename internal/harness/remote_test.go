package harness

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

const remoteURL = "https://github.com/o/lib/harness/h.yaml"

// remotePin returns the pinned reference of body served at u.
func remotePin(t *testing.T, u string, body []byte) ref.Ref {
	t.Helper()
	r, err := ref.Parse(u + "#sha256=" + string(ref.SHA256(body)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// served is a FetchBase over a fixed URL -> bytes map that records what
// was asked for.
type served struct {
	files map[string][]byte
	asked []string
}

func (s *served) fetch(_ context.Context, r ref.Ref) ([]byte, error) {
	s.asked = append(s.asked, r.URL)
	b, ok := s.files[r.URL]
	if !ok {
		return nil, errors.New("not served: " + r.URL)
	}
	return b, nil
}

func TestLoadRemoteRelativeRefs(t *testing.T) {
	cfg := orgCfg(t, "https://github.com/o/")
	body := []byte(`agent: ../agents/a.md#sha256=` + pin + `
doc: README.md#sha256=` + pin + `
policy: ./../policies/p.yaml#sha256=` + pin + `
skills:
  - ../skills/x#sha256=` + pin + `
  - https://github.com/o/lib/skills/y#sha256=` + pin + `
openshell: {profiles: [../profiles/pr.yaml#sha256=` + pin + `]}
validation_loop: {schema: ../schemas/r.json#sha256=` + pin + `}
allowed_remote_resources: [https://github.com/o/lib/]
forge:
  github:
    skills: [../skills/gh#sha256=` + pin + `]
`)
	r := remotePin(t, remoteURL, body)
	h, err := LoadRemote(context.Background(), r, body, LoadOptions{Config: cfg, Forge: "github"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"agent":                  "https://github.com/o/lib/agents/a.md#sha256=" + pin,
		"doc":                    "https://github.com/o/lib/harness/README.md#sha256=" + pin,
		"policy":                 "https://github.com/o/lib/policies/p.yaml#sha256=" + pin,
		"validation_loop.schema": "https://github.com/o/lib/schemas/r.json#sha256=" + pin,
	}
	got := map[string]string{"agent": h.Agent, "doc": h.Doc, "policy": h.Policy, "validation_loop.schema": h.ValidationLoop.Schema}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	wantSkills := []string{
		"https://github.com/o/lib/skills/x#sha256=" + pin,
		"https://github.com/o/lib/skills/y#sha256=" + pin,
		"https://github.com/o/lib/skills/gh#sha256=" + pin, // from the applied overlay
	}
	if !slices.Equal(h.Skills, wantSkills) {
		t.Errorf("skills = %q", h.Skills)
	}
	if !slices.Equal(h.Openshell.Profiles, []string{"https://github.com/o/lib/profiles/pr.yaml#sha256=" + pin}) {
		t.Errorf("profiles = %q", h.Openshell.Profiles)
	}
	if h.File != remoteURL || !slices.Equal(h.Chain, []string{remoteURL}) || h.Root != "" || h.Layers != nil || h.AppliedForge != "github" {
		t.Errorf("file %q chain %q root %q layers %q forge %q", h.File, h.Chain, h.Root, h.Layers, h.AppliedForge)
	}
	// Nothing in it resolves against a local directory (not even the
	// working directory).
	if _, err := h.Resolve("agents/a.md"); !errors.Is(err, ErrNoLocalDir) {
		t.Errorf("Resolve on a remote harness: %v", err)
	}
	// Absolute local paths in remote content are refused.
	bad := []byte("agent: /etc/passwd\n")
	if _, err := LoadRemote(context.Background(), remotePin(t, remoteURL, bad), bad, LoadOptions{Config: cfg}); !errors.Is(err, ref.ErrLocalInRemote) {
		t.Errorf("absolute local path: err = %v", err)
	}
}

func TestLoadRemoteBase(t *testing.T) {
	cfg := orgCfg(t, "https://github.com/o/")
	base2 := []byte("agent: ../agents/deep.md#sha256=" + pin + "\nplugins: [../plugins/p#sha256=" + pin + "]\nsecurity: {fail_mode: closed}\n")
	base2URL := "https://github.com/o/lib/common/b2.yaml"
	base := []byte("base: ../common/b2.yaml#sha256=" + string(ref.SHA256(base2)) + "\nskills: [../skills/x#sha256=" + pin + "]\nallowed_remote_resources: [https://github.com/o/lib/plugins/]\n")
	baseURL := "https://github.com/o/lib/harness/base.yaml"
	top := []byte("base: base.yaml#sha256=" + string(ref.SHA256(base)) + "\nskills: [../skills/y#sha256=" + pin + "]\nsecurity: {fail_mode: open}\nallowed_remote_resources: [https://github.com/o/lib/harness/, https://github.com/o/lib/common/, https://github.com/o/lib/skills/, https://github.com/o/lib/agents/]\n")
	s := &served{files: map[string][]byte{baseURL: base, base2URL: base2}}
	r := remotePin(t, remoteURL, top)

	if _, err := LoadRemote(context.Background(), r, top, LoadOptions{Config: cfg}); !errors.Is(err, ErrRemoteBase) || !strings.Contains(err.Error(), remoteURL+":1: base") {
		t.Fatalf("without FetchBase: %v", err)
	}
	h, err := LoadRemote(context.Background(), r, top, LoadOptions{Config: cfg, FetchBase: s.fetch})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.asked, []string{baseURL, base2URL}) {
		t.Errorf("fetched %q", s.asked)
	}
	if !slices.Equal(h.Chain, []string{remoteURL, baseURL, base2URL}) {
		t.Errorf("chain %q", h.Chain)
	}
	if h.Base != baseURL+"#sha256="+string(ref.SHA256(base)) {
		t.Errorf("base %q", h.Base)
	}
	if h.Agent != "https://github.com/o/lib/agents/deep.md#sha256="+pin {
		t.Errorf("agent %q (the base's, resolved against the base's URL)", h.Agent)
	}
	if !slices.Equal(h.Skills, []string{"https://github.com/o/lib/skills/x#sha256=" + pin, "https://github.com/o/lib/skills/y#sha256=" + pin}) {
		t.Errorf("skills %q", h.Skills)
	}
	if !slices.Equal(h.Plugins, []string{"https://github.com/o/lib/plugins/p#sha256=" + pin}) {
		t.Errorf("plugins %q", h.Plugins)
	}
	if h.Security.FailMode != "closed" || len(h.Notices) != 1 {
		t.Errorf("fail_mode %q notices %q: the child may not weaken its base", h.Security.FailMode, h.Notices)
	}

}

func TestLoadRemoteCycle(t *testing.T) {
	// A base chain that comes back to the top harness's URL is a cycle,
	// even though the bytes behind the two pins differ: identity is the
	// canonical URL, as for remote bases.
	cfg := orgCfg(t, "https://github.com/o/")
	other := []byte("agent: a.md#sha256=" + pin + "\n")
	top := []byte("base: ./h.yaml#sha256=" + string(ref.SHA256(other)) + "\nallowed_remote_resources: [https://github.com/o/lib/harness/]\n")
	s := &served{files: map[string][]byte{remoteURL: other}}
	_, err := LoadRemote(context.Background(), remotePin(t, remoteURL, top), top, LoadOptions{Config: cfg, FetchBase: s.fetch})
	if !errors.Is(err, ErrCycle) || !strings.Contains(err.Error(), remoteURL+" -> "+remoteURL) {
		t.Fatalf("cycle through the top harness: %v", err)
	}
	if len(s.asked) != 0 {
		t.Errorf("fetched %q although the cycle was known from the URL", s.asked)
	}
}

func TestLoadRemoteExecutableRejected(t *testing.T) {
	cfg := orgCfg(t, "https://github.com/o/")
	allow := "allowed_remote_resources: [https://github.com/o/lib/]\nagent: ../agents/a.md#sha256=" + pin + "\n"
	for _, c := range []struct{ name, body, forge, field string }{
		{"pre_script", allow + "pre_script: ../scripts/pre.sh\n", "", "pre_script"},
		{"post_script", allow + "post_script: post.sh#sha256=" + pin + "\n", "", "post_script"},
		{"validation script", allow + "validation_loop: {script: ../scripts/v.sh}\n", "", "validation_loop.script"},
		{"host file", allow + "host_files: [{src: env/x.env, dest: /tmp/x}]\n", "", "host_files"},
		{"forge overlay", allow + "forge:\n  github:\n    pre_script: gh.sh\n", "github", "pre_script"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := []byte(c.body)
			_, err := LoadRemote(context.Background(), remotePin(t, remoteURL, body), body, LoadOptions{Config: cfg, Forge: c.forge})
			if !errors.Is(err, ErrExecutableRemote) || !strings.Contains(err.Error(), remoteURL+":") || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("err = %v, want %v at %s", err, ErrExecutableRemote, c.field)
			}
		})
	}
	// The same from a remote base of the remote harness.
	base := []byte("pre_script: ../scripts/pre.sh\n")
	baseURL := "https://github.com/o/lib/harness/base.yaml"
	top := []byte(allow + "base: base.yaml#sha256=" + string(ref.SHA256(base)) + "\n")
	s := &served{files: map[string][]byte{baseURL: base}}
	_, err := LoadRemote(context.Background(), remotePin(t, remoteURL, top), top, LoadOptions{Config: cfg, FetchBase: s.fetch})
	if !errors.Is(err, ErrExecutableRemote) || !strings.Contains(err.Error(), baseURL+":1: pre_script") {
		t.Fatalf("script in a remote base: %v", err)
	}
}

func TestLoadRemoteDigestMismatch(t *testing.T) {
	cfg := orgCfg(t, "https://github.com/o/")
	body := []byte("agent: ../agents/a.md#sha256=" + pin + "\nallowed_remote_resources: [https://github.com/o/lib/]\n")
	r := remotePin(t, remoteURL, body)
	if _, err := LoadRemote(context.Background(), r, body, LoadOptions{Config: cfg}); err != nil {
		t.Fatalf("good bytes: %v", err)
	}
	tampered := append([]byte("pre_script: /bin/evil\n"), body...)
	_, err := LoadRemote(context.Background(), r, tampered, LoadOptions{Config: cfg})
	if !errors.Is(err, ErrDigestMismatch) || !strings.Contains(err.Error(), remoteURL) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("tampered bytes: %v", err)
	}
	// Unpinned, not a URL, or a hand-built Ref whose URL is not canonical.
	for _, c := range []struct {
		name string
		r    ref.Ref
		err  error
	}{
		{"unpinned", ref.Ref{Kind: ref.URL, URL: remoteURL}, ref.ErrMissingDigest},
		{"local", ref.Ref{Kind: ref.Relative, Path: "harness/h.yaml", Digest: r.Digest}, nil},
		{"not canonical", ref.Ref{Kind: ref.URL, URL: "https://GitHub.com:443/o/lib/x/../harness/h.yaml", Digest: r.Digest}, nil},
	} {
		_, err := LoadRemote(context.Background(), c.r, body, LoadOptions{Config: cfg})
		if err == nil || (c.err != nil && !errors.Is(err, c.err)) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.err)
		}
	}
}

func TestLoadRemoteAllowlistNotWidened(t *testing.T) {
	cfg := orgCfg(t, "https://github.com/o/")
	load := func(body []byte, s *served) (*Harness, error) {
		opts := LoadOptions{Config: cfg}
		if s != nil {
			opts.FetchBase = s.fetch
		}
		return LoadRemote(context.Background(), remotePin(t, remoteURL, body), body, opts)
	}
	// A sibling of the harness is not allowed just because the harness
	// lives there.
	for _, c := range []struct{ name, body string }{
		{"sibling agent", "agent: a.md#sha256=" + pin + "\nallowed_remote_resources: [https://github.com/o/lib/skills/]\n"},
		{"empty allowlist", "agent: a.md#sha256=" + pin + "\n"},
		{"agent outside", "agent: ../agents/a.md#sha256=" + pin + "\nallowed_remote_resources: [https://github.com/o/lib/harness/]\n"},
	} {
		if _, err := load([]byte(c.body), nil); !errors.Is(err, ref.ErrNotAllowed) {
			t.Errorf("%s: err = %v, want %v", c.name, err, ref.ErrNotAllowed)
		}
	}
	// Nor may its base sit beside it unlisted; nothing is fetched.
	s := &served{files: map[string][]byte{}}
	body := []byte("base: b.yaml#sha256=" + pin + "\nagent: ../agents/a.md#sha256=" + pin + "\nallowed_remote_resources: [https://github.com/o/lib/agents/]\n")
	if _, err := load(body, s); !errors.Is(err, ref.ErrNotAllowed) || len(s.asked) != 0 {
		t.Errorf("unlisted base: err = %v, fetched %q", err, s.asked)
	}
	// The harness's own list must stay inside the org list.
	body = []byte("agent: https://github.com/x/a.md#sha256=" + pin + "\nallowed_remote_resources: [https://github.com/x/]\n")
	if _, err := load(body, nil); !errors.Is(err, ErrOrgAllowlist) {
		t.Errorf("list outside the org list: err = %v", err)
	}
	// The effective list is exactly the union of the chain's lists.
	base := []byte("agent: ../agents/a.md#sha256=" + pin + "\nallowed_remote_resources: [https://github.com/o/lib/agents/]\n")
	baseURL := "https://github.com/o/lib/bases/b.yaml"
	body = []byte("base: ../bases/b.yaml#sha256=" + string(ref.SHA256(base)) + "\nskills: [../skills/s#sha256=" + pin + "]\nallowed_remote_resources: [https://github.com/o/lib/bases/, https://github.com/o/lib/skills/]\n")
	h, err := load(body, &served{files: map[string][]byte{baseURL: base}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://github.com/o/lib/agents/", "https://github.com/o/lib/bases/", "https://github.com/o/lib/skills/"}
	got := slices.Sorted(slices.Values(h.AllowedRemoteResources))
	if !slices.Equal(got, want) {
		t.Errorf("effective allowlist %q, want %q", got, want)
	}
	if _, ok := ref.MatchPrefix(remoteURL, h.AllowedRemoteResources); ok {
		t.Errorf("the harness's own location %s became allowed: %q", remoteURL, h.AllowedRemoteResources)
	}
}

// Remote content may not name host environment variables: a ${VAR} host
// file or env value would let the remote author pick which host files or
// secrets reach the sandbox.
func TestLoadRemoteRejectsEnvExpansion(t *testing.T) {
	cfg := orgCfg(t, "https://github.com/o/")
	for name, tail := range map[string]string{
		"host file":      "host_files:\n  - {src: \"${HOME}/.ssh/id_rsa\", dest: /sandbox/workspace/k}\n",
		"env sandbox":    "env:\n  sandbox:\n    AWS: \"${AWS_SECRET_ACCESS_KEY}\"\n",
		"env runner":     "env:\n  runner:\n    X: \"${X}\"\n",
		"overlay env":    "forge:\n  github:\n    env:\n      sandbox:\n        T: \"${GH_TOKEN}\"\n",
		"agent from env": "",
	} {
		t.Run(name, func(t *testing.T) {
			agent := "agent: ../agents/a.md#sha256=" + pin + "\n"
			if name == "agent from env" {
				agent = "agent: \"${AGENT}\"\n"
			}
			body := []byte(agent + "allowed_remote_resources: [https://github.com/o/lib/]\n" + tail)
			_, err := LoadRemote(context.Background(), remotePin(t, remoteURL, body), body, LoadOptions{Config: cfg})
			want := ErrRemoteExpansion
			if name == "env runner" {
				want = ErrRemoteRunnerEnv // env.runner is refused whatever its value
			}
			if !errors.Is(err, want) {
				t.Fatalf("err = %v, want %v", err, want)
			}
		})
	}
	// The same entries are fine in a local harness.
	body := []byte("agent: ../agents/a.md#sha256=" + pin + "\nallowed_remote_resources: [https://github.com/o/lib/]\nenv:\n  sandbox:\n    A: plain\n")
	if _, err := LoadRemote(context.Background(), remotePin(t, remoteURL, body), body, LoadOptions{Config: cfg}); err != nil {
		t.Fatalf("plain env value rejected: %v", err)
	}
}
