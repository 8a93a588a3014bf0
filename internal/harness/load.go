package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// Sentinel errors (wrapped; branch with errors.Is).
var (
	ErrExecutableRemote = errors.New("executable resources (scripts, validation scripts, host files) must be local, not URLs")
	ErrNotFound         = errors.New("no such file or directory")
	ErrWrongType        = errors.New("wrong file type")
	ErrEscapes          = errors.New("path escapes the fullsend directory")
	ErrRuntimeFetch     = errors.New("runtime fetch needs a non-empty allowed_remote_resources")
	ErrOrgAllowlist     = errors.New("not within the org allowed_remote_resources (config.yaml)")
	ErrRemoteBase       = errors.New("remote bases are fetched by `fullsend resolve`; run it (or `fullsend run`) instead")
	ErrCycle            = errors.New("base: cycle")
	ErrChainTooLong     = errors.New("base: chain too long")
	ErrEnvNotAllowed    = errors.New("${VAR} references are only expanded in host_files src")
	ErrDigestMismatch   = errors.New("sha256 does not match the pinned digest")
	ErrNoLocalDir       = errors.New("a harness loaded from a URL has no local fullsend dir")
	// ErrRemoteExpansion: remote content may not name host environment
	// variables. ${VAR} in a reference (a host file, a script) or in an env
	// value of a remote harness would let the remote author choose which
	// host files or secrets reach the sandbox; declare such entries in a
	// local harness that uses the remote one as its base.
	ErrRemoteExpansion = errors.New("${VAR} expansion is not allowed in remote content (declare the entry in a local harness)")
	// ErrRemoteSecrets: remote content may not ask for org secrets, like
	// it may not read the runner's variables; a local harness that uses
	// the remote one as its base asks for them.
	ErrRemoteSecrets = errors.New("secrets are not allowed in remote content (ask for them in a local harness)")
	// ErrRemoteRunnerEnv: remote content may not set env.runner at all. It
	// is the environment of host scripts, which run outside the sandbox;
	// a variable there (LD_PRELOAD, BASH_ENV, PATH, …) chosen by a remote
	// author is code execution on the runner host.
	ErrRemoteNativeTools = errors.New("native.tools is not allowed in remote content: it grants the agent tools that reach the network from the host (declare it in a local harness)")
	ErrRemoteRunnerEnv   = errors.New("env.runner is not allowed in remote content: it is the environment of host scripts (declare it in a local harness)")
)

// LoadOptions configures Load and LoadRemote.
type LoadOptions struct {
	// Root is the fullsend dir: relative references resolve against it and
	// may not escape it. Default: FindRoot(path).
	Root string
	// Layers are further fullsend dirs, least specific first (fullsend
	// defaults, then the org .fullsend). A relative path is looked up in
	// Root first, then in Layers from last to first: the most specific file
	// wins.
	Layers []string
	// Config supplies the org allowlist that remote bases must match.
	// Default: config.Default().
	Config *config.Config
	// Forge, when set, applies that forge overlay after composition.
	Forge string
	// ForgeOptional: apply Forge only when the harness has that overlay
	// (the overlay a detected CI selects); otherwise an absent overlay is
	// an error.
	ForgeOptional bool
	// FetchBase returns the verified bytes of a remote base harness. When
	// nil, a remote base is an error (ErrRemoteBase). Load re-checks the
	// sha256 of what it returns.
	FetchBase func(ctx context.Context, r ref.Ref) ([]byte, error)
	// Context is passed to FetchBase (default context.Background()).
	Context context.Context
	// Check, when set, is called on the composed harness (forge overlay
	// applied, the others still in Forge) before Load returns it: the
	// caller's trust rule for where the harness came from
	// (trust.CheckRepoHarness for a repository layer).
	Check func(*Harness) error
}

// FindRoot guesses the fullsend dir of a harness file: the parent of its
// directory when that directory is named "harness" (the .fullsend layout),
// otherwise its directory.
func FindRoot(harnessPath string) string {
	abs, err := filepath.Abs(harnessPath)
	if err != nil {
		abs = harnessPath
	}
	dir := filepath.Dir(abs)
	if filepath.Base(dir) == "harness" {
		return filepath.Dir(dir)
	}
	return dir
}

// ReadFile reads a harness file, bounded by yamlx.MaxFileSize.
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("harness %s: %w", path, unwrapPathErr(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, yamlx.MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("harness %s: %w", path, err)
	}
	return data, nil
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		if errors.Is(err, os.ErrNotExist) {
			return ErrNotFound
		}
		return pe.Err
	}
	return err
}

type link struct {
	h   *Harness
	key string // identity for cycle detection: real path or canonical URL
	url string // canonical URL when remote
}

// Load reads the harness at path, follows its base: chain (local bases from
// the fullsend dir, remote bases through opts.FetchBase), merges the chain
// (see Merge) and applies opts.Forge. It does not validate references; call
// Validate.
func Load(path string, opts LoadOptions) (*Harness, error) {
	if opts.Root == "" {
		opts.Root = FindRoot(path)
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, err
	}
	layers := make([]string, 0, len(opts.Layers))
	for _, l := range opts.Layers {
		a, err := filepath.Abs(l)
		if err != nil {
			return nil, err
		}
		layers = append(layers, a)
	}
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	first, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	key := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		key = real
	}
	return compose(ctx, link{h: first, key: key}, root, layers, opts)
}

// LoadRemote composes a top-level harness fetched from the pinned URL r
// (canonical URL and digest) whose verified bytes are data. It treats the
// harness as Load treats a remote base: every reference in it is resolved
// against r.URL (RFC 3986; an absolute local path is ref.ErrLocalInRemote),
// its base: chain is followed through opts.FetchBase, the chain is merged
// and opts.Forge applied. The effective allowed_remote_resources is the
// union of the chain's own lists; the harness's location grants nothing.
//
// Unlike Load, LoadRemote validates the result against opts.Config (see
// Validate): nothing in it resolves locally, so this does no file I/O, and
// an executable field that became a URL fails with ErrExecutableRemote.
// opts.Root, opts.Layers and opts.Context are ignored (ctx is handed to
// FetchBase); the result has no Root, and Resolve refuses local lookups
// on it (ErrNoLocalDir). sha256(data) is checked against r.Digest again
// (ErrDigestMismatch), and r must be the canonical form of its URL.
func LoadRemote(ctx context.Context, r ref.Ref, data []byte, opts LoadOptions) (*Harness, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if r.Kind != ref.URL {
		return nil, fmt.Errorf("harness %q: LoadRemote needs a URL reference", r.String())
	}
	// Re-parse: the canonical URL and digest of the reference govern, not
	// whatever a hand-built Ref carries.
	rp, err := ref.Parse(r.String())
	if err != nil {
		return nil, fmt.Errorf("harness %w", err)
	}
	if err := rp.RequireDigest(); err != nil {
		return nil, fmt.Errorf("harness %w", err)
	}
	if rp.Kind != ref.URL || rp.URL != r.URL {
		return nil, fmt.Errorf("harness %s: not a canonical URL (canonical form: %s)", r.URL, rp.URL)
	}
	if got := ref.SHA256(data); got != rp.Digest {
		return nil, fmt.Errorf("harness %s: %w (got %s, want %s)", rp.URL, ErrDigestMismatch, got, rp.Digest)
	}
	first, err := Parse(rp.URL, data)
	if err != nil {
		return nil, err
	}
	if err := absolutize(first, rp.URL); err != nil {
		return nil, err
	}
	h, err := compose(ctx, link{h: first, key: rp.URL, url: rp.URL}, "", nil, opts)
	if err != nil {
		return nil, err
	}
	if err := h.Validate(opts.Config); err != nil {
		return nil, err
	}
	return h, nil
}

// compose follows the base: chain above first (parsed, and absolutised
// when remote), merges it child over base and applies opts.Forge. root and
// layers are where local bases are looked up.
func compose(ctx context.Context, first link, root string, layers []string, opts LoadOptions) (*Harness, error) {
	cfg := opts.Config
	if cfg == nil {
		cfg = config.Default()
	}
	first.h.Root, first.h.Layers = root, layers
	chain := []link{first}
	for cur := chain[0]; cur.h.Base != ""; cur = chain[len(chain)-1] {
		if len(chain) > MaxBaseChain {
			return nil, baseErr(cur, fmt.Errorf("%w: more than %d bases above %s", ErrChainTooLong, MaxBaseChain, first.h.File))
		}
		next, err := nextBase(ctx, cur, chain, root, layers, cfg, opts)
		if err != nil {
			return nil, err
		}
		next.h.Root, next.h.Layers = root, layers
		chain = append(chain, next)
	}
	merged := chain[len(chain)-1].h
	for i := len(chain) - 2; i >= 0; i-- {
		merged = Merge(merged, chain[i].h)
	}
	merged.File = first.h.File
	merged.Base = first.h.Base
	merged.Root, merged.Layers = root, layers
	merged.Chain = make([]string, len(chain))
	for i, l := range chain {
		merged.Chain[i] = l.h.File
	}
	if opts.Forge != "" && (!opts.ForgeOptional || merged.Forge[opts.Forge] != nil) {
		if err := merged.ApplyForge(opts.Forge); err != nil {
			return nil, err
		}
	}
	if opts.Check != nil {
		if err := opts.Check(merged); err != nil {
			return nil, err
		}
	}
	return merged, nil
}

// baseErr places err at the base: field of cur.
func baseErr(cur link, err error) error {
	pos := cur.h.Pos("base", "")
	return &yamlx.Error{File: pos.File, Line: pos.Line, Field: "base", Err: err}
}

// cycleErr reports a cycle when key is already in chain (checked before
// anything is fetched or read); file names the base that closes it.
func cycleErr(chain []link, key, file string) error {
	for i, l := range chain {
		if l.key == key {
			names := make([]string, 0, len(chain)-i+1)
			for _, c := range chain[i:] {
				names = append(names, c.h.File)
			}
			names = append(names, file)
			return fmt.Errorf("%w: %s", ErrCycle, strings.Join(names, " -> "))
		}
	}
	return nil
}

// nextBase reads the base of cur, the last link of chain.
func nextBase(ctx context.Context, cur link, chain []link, root string, layers []string, cfg *config.Config, opts LoadOptions) (link, error) {
	var r ref.Ref
	var err error
	if cur.url != "" {
		r, err = ref.ResolveRef(cur.url, cur.h.Base)
	} else {
		r, err = ref.Parse(cur.h.Base)
	}
	if err != nil {
		return link{}, baseErr(cur, err)
	}
	if r.Kind == ref.URL {
		return remoteBase(ctx, cur, chain, r, cfg, opts)
	}
	if root == "" {
		// Unreachable: a remote harness's base is absolutised.
		return link{}, baseErr(cur, fmt.Errorf("%q: %w", cur.h.Base, ErrNoLocalDir))
	}
	// Opened through the fullsend dir (os.Root): what is parsed is what
	// the containment check saw.
	l, err := openLocal(r, root, layers)
	if err != nil {
		return link{}, baseErr(cur, err)
	}
	p := l.Path
	k := p
	if real, err := filepath.EvalSymlinks(p); err == nil {
		k = real // identity for cycle detection only
	}
	if err := cycleErr(chain, k, displayPath(p, root)); err != nil {
		l.Close()
		return link{}, baseErr(cur, err)
	}
	b, err := l.readHarness()
	l.Close()
	if err != nil {
		return link{}, baseErr(cur, err)
	}
	bh, err := Parse(displayPath(p, root), b)
	if err != nil {
		return link{}, err
	}
	return link{h: bh, key: k}, nil
}

// remoteBase fetches, checks and parses the pinned remote base r of cur.
func remoteBase(ctx context.Context, cur link, chain []link, r ref.Ref, cfg *config.Config, opts LoadOptions) (link, error) {
	if err := r.RequireDigest(); err != nil {
		return link{}, baseErr(cur, err)
	}
	allow := unionAllowlist(chain)
	if err := ref.CheckSubset(allow, cfg.AllowedRemoteResources); err != nil {
		return link{}, baseErr(cur, fmt.Errorf("%w: %w", ErrOrgAllowlist, err))
	}
	if _, err := ref.CheckAllowed(r, allow); err != nil {
		return link{}, baseErr(cur, err)
	}
	if err := cycleErr(chain, r.URL, r.URL); err != nil {
		return link{}, baseErr(cur, err)
	}
	if opts.FetchBase == nil {
		return link{}, baseErr(cur, fmt.Errorf("%s: %w", r.URL, ErrRemoteBase))
	}
	b, err := opts.FetchBase(ctx, r)
	if err != nil {
		return link{}, baseErr(cur, err)
	}
	if got := ref.SHA256(b); got != r.Digest {
		return link{}, baseErr(cur, fmt.Errorf("%s: %w (got %s, want %s)", r.URL, ErrDigestMismatch, got, r.Digest))
	}
	bh, err := Parse(r.URL, b)
	if err != nil {
		return link{}, err
	}
	if err := absolutize(bh, r.URL); err != nil {
		return link{}, err
	}
	return link{h: bh, key: r.URL, url: r.URL}, nil
}

func unionAllowlist(chain []link) []string {
	var out []string
	for _, l := range chain {
		out = concat(out, l.h.AllowedRemoteResources)
	}
	return out
}

func displayPath(p, root string) string {
	if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// absolutize rewrites every reference of a harness fetched from baseURL
// into an absolute URL (RFC 3986), so that after merging nothing in it
// resolves against the local fullsend dir. Absolute local paths are
// rejected: remote content never names host files.
func absolutize(h *Harness, baseURL string) error {
	fix := func(field string, p *string) error {
		if *p == "" {
			return nil
		}
		if strings.Contains(*p, "${") {
			pos := h.Pos(field, *p)
			return &yamlx.Error{File: pos.File, Line: pos.Line, Field: field, Err: ErrRemoteExpansion}
		}
		r, err := ref.ResolveRef(baseURL, *p)
		if err != nil {
			pos := h.Pos(field, *p)
			return &yamlx.Error{File: pos.File, Line: pos.Line, Field: field, Err: err}
		}
		old := *p
		*p = r.String()
		if pos, ok := h.origins[field+"\x00"+old]; ok {
			h.origins[field+"\x00"+*p] = pos
		}
		return nil
	}
	fixList := func(field string, l []string) error {
		for i := range l {
			if err := fix(field, &l[i]); err != nil {
				return err
			}
		}
		return nil
	}
	var walk func(h *Harness, prefix string) error
	walk = func(h *Harness, prefix string) error {
		for _, f := range []struct {
			name string
			p    *string
		}{{"base", &h.Base}, {"agent", &h.Agent}, {"doc", &h.Doc}, {"policy", &h.Policy}, {"pre_script", &h.PreScript}, {"post_script", &h.PostScript}, {"agent_input", &h.AgentInput}} {
			if err := fix(prefix+f.name, f.p); err != nil {
				return err
			}
		}
		for _, f := range []struct {
			name string
			l    []string
		}{{"skills", h.Skills}, {"plugins", h.Plugins}, {"providers", h.Providers}, {"openshell.profiles", h.Openshell.Profiles}} {
			if err := fixList(prefix+f.name, f.l); err != nil {
				return err
			}
		}
		if len(h.SkillOverrides) > 0 {
			field := prefix + "skill_overrides"
			pos := h.Pos(field, h.SkillOverrides[0].Source)
			if h.SkillOverrides[0].Source == "" {
				pos = h.Pos(prefix+"skills", h.SkillOverrides[0].Skill)
			}
			return &yamlx.Error{File: pos.File, Line: pos.Line, Field: prefix + "skills", Err: ErrRemoteOverrides}
		}
		if vl := h.ValidationLoop; vl != nil {
			if err := fix(prefix+"validation_loop.schema", &vl.Schema); err != nil {
				return err
			}
			if err := fix(prefix+"validation_loop.script", &vl.Script); err != nil {
				return err
			}
		}
		for i := range h.HostFiles {
			if err := fix(prefix+"host_files", &h.HostFiles[i].Src); err != nil {
				return err
			}
		}
		if err := remoteRefusals(h, prefix); err != nil {
			return err
		}
		for name, o := range h.Forge {
			o.origins = h.origins // positions are shared under full names
			if err := walk(o, prefix+"forge."+name+"."); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(h, ""); err != nil {
		return err
	}
	if err := checkRemoteNative(h); err != nil {
		return err
	}
	// Overlay positions are looked up under plain names inside overlays.
	for name, o := range h.Forge {
		o.origins = rekey(filterPrefix(h.origins, "forge."+name+"."), "forge."+name+".")
	}
	return nil
}

// remoteRefusals refuses, in a remote layer (prefix names an overlay), what
// remote content may never set: a preflight check (a host command), native
// tools, env.runner, and ${VAR} in env.sandbox values.
func remoteRefusals(h *Harness, prefix string) error {
	if vl := h.ValidationLoop; vl != nil && vl.PreflightCheck != "" {
		field := prefix + "validation_loop.preflight_check"
		pos := h.Pos(field, "")
		return &yamlx.Error{File: pos.File, Line: pos.Line, Field: field, Err: ErrRemotePreflight}
	}
	if t := h.Security.TrustRepoSettings; t != nil && *t {
		field := prefix + "security.trust_repo_settings"
		pos := h.Pos(field, "")
		return &yamlx.Error{File: pos.File, Line: pos.Line, Field: field, Err: ErrRemoteTrustRepo}
	}
	if e := h.Security.Enabled; e != nil && !*e {
		field := prefix + "security.enabled"
		pos := h.Pos(field, "")
		return &yamlx.Error{File: pos.File, Line: pos.Line, Field: field, Err: ErrRemoteSecurityOff}
	}
	if h.Security.OnCritical == "review" {
		field := prefix + "security.escalation.on_critical"
		pos := h.Pos(field, "")
		return &yamlx.Error{File: pos.File, Line: pos.Line, Field: field, Err: ErrRemoteSecurityOff}
	}
	if len(h.Native.Tools) > 0 {
		field := prefix + "native.tools"
		pos := h.Pos(field, h.Native.Tools[0])
		return &yamlx.Error{File: pos.File, Line: pos.Line, Field: field, Err: ErrRemoteNativeTools}
	}
	if len(h.Secrets) > 0 {
		field := prefix + "secrets"
		pos := h.Pos(field, h.Secrets[0])
		return &yamlx.Error{File: pos.File, Line: pos.Line, Field: field, Err: ErrRemoteSecrets}
	}
	if len(h.Env.Runner) > 0 {
		field := prefix + "env.runner"
		k := slices.Sorted(maps.Keys(h.Env.Runner))[0]
		pos := h.Pos(field+"."+k, h.Env.Runner[k])
		return &yamlx.Error{File: pos.File, Line: pos.Line, Field: field + "." + k, Err: ErrRemoteRunnerEnv}
	}
	for _, e := range []struct {
		name string
		m    map[string]string
	}{{"env.sandbox", h.Env.Sandbox}} {
		for _, k := range slices.Sorted(maps.Keys(e.m)) {
			if strings.Contains(e.m[k], "${") {
				field := prefix + e.name + "." + k
				pos := h.Pos(field, e.m[k])
				return &yamlx.Error{File: pos.File, Line: pos.Line, Field: field, Err: ErrRemoteExpansion}
			}
		}
	}
	return nil
}

func filterPrefix(m map[string]Pos, prefix string) map[string]Pos {
	out := map[string]Pos{}
	for k, v := range m {
		if strings.HasPrefix(k, prefix) {
			out[k] = v
		}
	}
	return out
}
