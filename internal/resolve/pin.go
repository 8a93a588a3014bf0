package resolve

import (
	"context"
	"errors"
	"fmt"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// CommitResolver asks a forge which commit a branch or tag names now;
// *forge.Client implements it.
type CommitResolver interface {
	ResolveCommit(ctx context.Context, loc forge.Location) (string, error)
}

// PinRequest names a forge resource to pin (`fullsend pin`).
type PinRequest struct {
	// URL is a forge tree, blob or raw URL at any ref (branch, tag or
	// commit), without a #sha256= pin.
	URL string
	// Kind is the kind of the reference in the harness ("agent", "skill",
	// "policy", "base", …). Skills and plugins are directories (a blob URL
	// is taken as the tree of the same path); everything else is a file (a
	// tree URL is taken as the blob of the same path).
	Kind string
	// Allowed is the effective allowed_remote_resources the URL must
	// match (as written; canonicalised here).
	Allowed []string
}

// Pinned is a resource fetched at the commit its ref names, verified,
// scanned and cached.
type Pinned struct {
	// Ref is the ref of the URL as given (a branch, a tag or a commit id).
	Ref string `json:"ref"`
	// Commit is the commit Ref named when it was fetched.
	Commit string `json:"commit"`
	// URL is the canonical forge URL at Commit, without pin; Pinned is URL
	// with its #sha256= pin, the reference written into a harness.
	URL    string     `json:"url"`
	Pinned string     `json:"pinned"`
	SHA256 ref.Digest `json:"sha256"`
	Type   cas.Type   `json:"type"`
	Files  int        `json:"files,omitempty"`
	Size   int64      `json:"size"`
	// CacheHit: the cache already held the content (it was fetched and
	// scanned again all the same, to learn its hash).
	CacheHit bool `json:"cache_hit"`
	// Notices are the scanner's notices (a blocking finding is an error).
	Notices []string `json:"scan_notices,omitempty"`
	// Content is a file's bytes (nil for a directory).
	Content []byte `json:"-"`
}

// Pin resolves the ref of req.URL to a commit through the forge API,
// fetches the resource at that commit through the forge client of
// Options.Network (the SSRF-safe client every resolution uses), computes
// its sha256 (file) or tree hash (directory), scans it like any remote
// fetch and caches it: the same checks as Resolve, with the hash learnt
// from the forge instead of read from a pin. It uses Options' Config,
// Store, Network, Scanner, Audit and Now; Offline is an error (a ref can
// only be resolved online).
func Pin(ctx context.Context, req PinRequest, o Options) (*Pinned, error) {
	if o.Offline {
		return nil, fmt.Errorf("pin %s: %w: resolving a branch or tag needs the forge", req.URL, ErrOffline)
	}
	r, err := newResolver(o)
	if err != nil {
		return nil, err
	}
	r.start(ctx)
	defer r.finish()
	rf, err := ref.Parse(req.URL)
	if err != nil {
		return nil, err
	}
	if rf.Kind != ref.URL {
		return nil, fmt.Errorf("pin %q: %w: want an https forge URL", req.URL, ErrWrongType)
	}
	if rf.Digest != "" {
		return nil, fmt.Errorf("pin %s: the URL already carries a #sha256= pin; give it without one", rf.URL)
	}
	var allow []string
	for i, p := range req.Allowed {
		c, err := ref.CanonicalPrefix(p)
		if err != nil {
			return nil, fmt.Errorf("allowed_remote_resources[%d]: %w", i, err)
		}
		allow = append(allow, c)
	}
	idx, err := ref.CheckAllowed(rf, allow)
	if err != nil {
		return nil, err
	}
	loc, err := forge.Parse(rf.URL, r.cfg.Forges)
	if err != nil {
		if errors.Is(err, forge.ErrNotForge) {
			return nil, fmt.Errorf("pin %s: %w (pin resolves branches and tags through a forge API)", rf.URL, err)
		}
		return nil, err
	}
	typ := cas.TypeFile
	switch {
	case isDirKind(req.Kind):
		typ = cas.TypeDirectory
		loc, err = loc.As(forge.Tree)
	case loc.Kind == forge.Tree:
		loc, err = loc.As(forge.Blob)
	}
	if err != nil {
		return nil, err
	}
	n, err := r.network()
	if err != nil {
		return nil, err
	}
	cr, ok := n.Forge.(CommitResolver)
	if !ok {
		return nil, fmt.Errorf("pin %s: the forge client cannot resolve refs", loc.URL)
	}
	commit := loc.Ref
	if !loc.AtCommit() {
		if commit, err = cr.ResolveCommit(ctx, loc); err != nil {
			return nil, err
		}
	}
	at := loc
	at.Ref = commit
	if at, err = at.As(loc.Kind); err != nil {
		return nil, err
	}
	p := &Pinned{Ref: loc.Ref, Commit: commit, URL: at.URL, Type: typ}
	var files map[string][]byte
	var content []byte
	if typ == cas.TypeDirectory {
		if files, err = n.Forge.FetchTree(ctx, at); err != nil {
			return nil, err
		}
		if p.SHA256, err = cas.TreeHash(files); err != nil {
			return nil, fmt.Errorf("%s: %w", at.URL, err)
		}
		p.Files = len(files)
	} else {
		if content, err = n.Forge.FetchFile(ctx, at); err != nil {
			return nil, err
		}
		p.SHA256 = ref.SHA256(content)
	}
	if _, err := o.Store.Get(p.SHA256); err == nil {
		p.CacheHit = true
	}
	w := want{url: at.URL, digest: p.SHA256, typ: typ, kind: req.Kind, loc: &at, allowedBy: req.Allowed[idx], fetchType: FetchStatic}
	var e cas.Entry
	if e, p.Size, err = r.scanStore(ctx, w, files, content, true); err != nil {
		return nil, err
	}
	r.recordConfirmed(w, e)
	r.auditHit(w, false, audit.SourceForge)
	p.Pinned = at.URL + "#sha256=" + string(p.SHA256)
	p.Content = content
	r.mu.Lock()
	p.Notices = append(p.Notices, r.notices...)
	err = r.auditErr
	r.mu.Unlock()
	return p, err
}
