package resolve

import (
	"context"
	"errors"
	"fmt"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/frontmatter"
	"github.com/fullsend-ai/fullsend/internal/ocicache"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// This file wires the shared cache tier (config.yaml cache.oci, package
// ocicache) between the local cache and the forge: local cache →
// registry → forge. See the package documentation, rule 4.

// Registry is the shared cache tier; *ocicache.Cache implements it. Get
// methods return content verified against d or an error matching
// ocicache.ErrNotFound (a miss), ocicache.ErrRefused or
// ocicache.ErrUnavailable; resolve verifies what they return again.
type Registry interface {
	Name() string
	GetFile(ctx context.Context, d ref.Digest) ([]byte, error)
	GetTree(ctx context.Context, d ref.Digest) (map[string][]byte, error)
	PutFile(ctx context.Context, d ref.Digest, content []byte, origin string) error
	PutTree(ctx context.Context, d ref.Digest, files map[string][]byte, origin string) error
}

// RegistryConcurrency bounds concurrent registry lookups of one
// resolution. They do not take a slot of Options.Concurrency, which
// bounds the load put on forges: a cold runner reads a whole level of the
// graph from the registry at once.
const RegistryConcurrency = 32

// pushConcurrency bounds the background pushes of one resolution.
const pushConcurrency = 4

var _ Registry = (*ocicache.Cache)(nil)

// NewRegistry returns the registry tier config.yaml's cache.oci names
// (nil, nil when none), with the limits NewNetwork's clients have
// (timeout, size limit, allowed_private_networks for hosts other than the
// registry) and credentials read through getenv. tweak is NewNetwork's.
// `fullsend cache push` and `cache ls --remote` use it.
func NewRegistry(cfg *config.Config, getenv func(string) string, tweak func(*fetch.Options)) (*ocicache.Cache, error) {
	return openRegistry(cfg, getenv, fetchOptions(cfg, tweak))
}

func openRegistry(cfg *config.Config, getenv func(string) string, o fetch.Options) (*ocicache.Cache, error) {
	oc := cfg.Cache.OCI
	if oc.Repository == "" {
		return nil, nil
	}
	return ocicache.New(ocicache.Options{
		Repository: oc.Repository, PlainHTTP: oc.PlainHTTP,
		AllowedPrivateNetworks: o.AllowedPrivateNetworks, Timeout: o.Timeout, MaxSize: o.MaxSize,
		Getenv: getenv, Resolver: o.Resolver, RootCAs: o.RootCAs,
	})
}

// newRegistry is NewNetwork's part: the tier as a Registry and whether to
// push.
func newRegistry(cfg *config.Config, getenv func(string) string, o fetch.Options) (Registry, bool, error) {
	c, err := openRegistry(cfg, getenv, o)
	if c == nil || err != nil {
		return nil, false, err
	}
	return c, cfg.Cache.OCI.Push, nil
}

// verifyTree checks files against w's tree-hash pin (cas.TreeHash also
// checks every path).
func verifyTree(w want, files map[string][]byte) error {
	got, err := cas.TreeHash(files)
	if err != nil {
		return err
	}
	if got != w.digest {
		return fmt.Errorf("%w: tree hash %s, pinned %s", fetch.ErrHashMismatch, got, w.digest)
	}
	return nil
}

// verifyFile checks b against w's sha256 pin.
func verifyFile(w want, b []byte) error {
	if got := ref.SHA256(b); got != w.digest {
		return fmt.Errorf("%w: sha256 %s, pinned %s", fetch.ErrHashMismatch, got, w.digest)
	}
	return nil
}

// fromRegistry asks the registry tier for w. ok reports a verified hit.
// A miss is silent; an unavailable registry is one warning per
// resolution; content that fails verification is a warning naming the
// registry and the digest, returned as refused, and the caller goes to
// the forge.
func (r *resolver) fromRegistry(ctx context.Context, n *Network, w want) (files map[string][]byte, content []byte, ok bool, refused error) {
	if n.Registry == nil {
		if n.RegistryErr != nil {
			r.warnOnce("registry-setup", fmt.Sprintf("cache.oci: %v; fetching from the forge", n.RegistryErr))
		}
		return nil, nil, false, nil
	}
	var err error
	if p := r.takePrefetch(w.digest, w.typ); p != nil {
		select {
		case <-p.done:
		case <-ctx.Done():
			return nil, nil, false, nil
		}
		files, content, err = p.files, p.content, p.err
	} else {
		select {
		case r.regSem <- struct{}{}:
		case <-ctx.Done():
			return nil, nil, false, nil
		}
		if w.typ == cas.TypeDirectory {
			files, err = n.Registry.GetTree(ctx, w.digest)
		} else {
			content, err = n.Registry.GetFile(ctx, w.digest)
		}
		<-r.regSem
	}
	if err == nil {
		if w.typ == cas.TypeDirectory {
			err = verifyTree(w, files)
		} else {
			err = verifyFile(w, content)
		}
	}
	var oe *ocicache.Error
	switch {
	case err == nil:
		if w.typ == cas.TypeDirectory && w.kind == "skill" {
			r.prefetchDeps(n.Registry, w, files)
		}
		return files, content, true, nil
	case errors.Is(err, ocicache.ErrNotFound), ctx.Err() != nil:
		return nil, nil, false, nil
	case errors.Is(err, ocicache.ErrUnavailable):
		r.warnOnce("registry-down", fmt.Sprintf("%v; fetching from the forge (the registry is not asked again in this run)", err))
		return nil, nil, false, nil
	case !errors.As(err, &oe):
		// The registry's answer passed its own checks but not ours.
		what := "file"
		if w.typ == cas.TypeDirectory {
			what = "tree"
		}
		err = fmt.Errorf("registry %s: %s sha256:%s: %w: %w", n.Registry.Name(), what, w.digest, ocicache.ErrRefused, err)
	}
	r.warn(fmt.Sprintf("%s: %v; fetching it from the forge instead", w.url, err))
	return nil, nil, false, err
}

// maxPrefetch bounds the prefetches of one resolution not yet taken.
const maxPrefetch = 64

// prefetch is a registry lookup started before its node exists.
type prefetch struct {
	done    chan struct{}
	typ     cas.Type
	files   map[string][]byte
	content []byte
	err     error
}

// prefetchDeps starts registry lookups of the dependencies a skill's
// SKILL.md pins, as soon as the skill came from the registry, so that
// they overlap with the skill's scan and cache write instead of waiting
// for the walker to reach them (a cold runner then reads a two-level graph
// in about two round trips). Only dependencies the allowlist admits are
// prefetched, from the registry only; what a prefetch returns is used only
// when the walker asks for that digest, and is then verified, scanned and
// cached like any registry answer. Unused prefetches are dropped.
func (r *resolver) prefetchDeps(reg Registry, w want, files map[string][]byte) {
	md, ok := files["SKILL.md"]
	if !ok {
		return
	}
	fm, err := frontmatter.Parse(w.url+"/SKILL.md", md)
	if err != nil {
		return
	}
	base, err := ref.DirURL(w.url)
	if err != nil {
		return
	}
	for _, raw := range fm.Dependencies {
		rf, err := ref.ResolveRef(base, raw)
		if err != nil || rf.Digest == "" {
			continue
		}
		if _, ok := ref.MatchPrefix(rf.URL, r.allow); !ok {
			continue
		}
		typ := cas.TypeDirectory
		if looksLikeFile(rf.URL) || r.explicitFileURL(raw) {
			typ = cas.TypeFile
		}
		r.startPrefetch(reg, rf.Digest, typ)
	}
}

func (r *resolver) startPrefetch(reg Registry, d ref.Digest, typ cas.Type) {
	r.mu.Lock()
	if _, busy := r.flights[d]; busy || r.prefetches[d] != nil || len(r.prefetches) >= maxPrefetch || r.prefetchCtx == nil {
		r.mu.Unlock()
		return
	}
	p := &prefetch{done: make(chan struct{}), typ: typ}
	r.prefetches[d] = p
	ctx := r.prefetchCtx
	r.prefetchWG.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.prefetchWG.Done()
		defer close(p.done)
		select {
		case r.regSem <- struct{}{}:
		case <-ctx.Done():
			p.err = ctx.Err()
			return
		}
		defer func() { <-r.regSem }()
		if typ == cas.TypeDirectory {
			p.files, p.err = reg.GetTree(ctx, d)
		} else {
			p.content, p.err = reg.GetFile(ctx, d)
		}
	}()
}

// takePrefetch returns (and forgets) the prefetch of d when it is of type
// typ.
func (r *resolver) takePrefetch(d ref.Digest, typ cas.Type) *prefetch {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.prefetches[d]
	if p == nil || p.typ != typ {
		return nil
	}
	delete(r.prefetches, d)
	return p
}

// push pushes what was fetched from the forge (verified, scanned and
// cached) to the registry tier, in the background; a failure is a
// warning, never an error of the run. Resolve and ResolveSkill wait for
// the pushes before they return.
func (r *resolver) push(n *Network, w want, files map[string][]byte, content []byte) {
	if n.Registry == nil || !n.Push {
		return
	}
	reg := n.Registry
	r.pushWG.Add(1)
	go func() {
		defer r.pushWG.Done()
		ctx := r.ctx
		select {
		case r.pushSem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-r.pushSem }()
		var err error
		if w.typ == cas.TypeDirectory {
			err = reg.PutTree(ctx, w.digest, files, w.url)
		} else {
			err = reg.PutFile(ctx, w.digest, content, w.url)
		}
		if err != nil && ctx.Err() == nil {
			if errors.Is(err, ocicache.ErrUnavailable) {
				// One warning for a registry that is down, whether reads
				// or pushes found out.
				r.warnOnce("registry-down", fmt.Sprintf("pushing to the shared cache: %v (the run goes on; no more pushes in this run)", err))
			} else {
				r.warn(fmt.Sprintf("pushing %s to the shared cache: %v (the run goes on)", w.url, err))
			}
		}
	}()
}

// warn records a warning for Result.Warnings (SkillResult.Notices).
func (r *resolver) warn(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warnings = append(r.warnings, msg)
}

// warnOnce records msg unless a warning of the same kind was recorded.
func (r *resolver) warnOnce(kind, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.warnedKinds[kind] {
		return
	}
	r.warnedKinds[kind] = true
	r.warnings = append(r.warnings, msg)
}

// start sets the caller's context, which background pushes and
// prefetches use.
func (r *resolver) start(ctx context.Context) {
	r.ctx = ctx
	r.prefetchCtx, r.stopPrefetch = context.WithCancel(ctx)
}

// finish stops the prefetches nobody took, waits for the background
// pushes and returns the warnings.
func (r *resolver) finish() []string {
	if r.stopPrefetch != nil {
		r.stopPrefetch()
	}
	r.prefetchWG.Wait()
	r.pushWG.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.warnings...)
}
