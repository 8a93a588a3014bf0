package fetchsvc

import (
	"context"

	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/resolve"
)

// SkillRef is a fetched, verified skill directory.
type SkillRef struct {
	URL    string     // canonical tree URL, no pin
	Digest ref.Digest // tree hash
	Dir    string     // host directory (cache tree)
}

// Dependency is a verified skill directory a fetched skill depends on
// (directly or transitively).
type Dependency struct {
	URL    string
	Digest ref.Digest
	Dir    string
}

// DependencyResolver resolves the dependencies: of a fetched skill's
// SKILL.md to the transitive closure of skill directories, under exactly
// the static rules (relative references against the skill's URL, pins,
// allowed_remote_resources, forge-only directories, scan before cache,
// cycles, max_depth, max_resources), fetching or taking them from the
// cache and auditing them with fetch_type "runtime". It returns them in
// graph order, the skill itself excluded.
type DependencyResolver interface {
	ResolveDependencies(ctx context.Context, skill SkillRef) ([]Dependency, error)
}

// resolveDeps is the default DependencyResolver: package resolve's
// ResolveSkill, so every rule is the resolver's own. The service has
// already audited the skill itself; the resolver audits its dependencies
// (and the skill only if it had to fetch it again).
type resolveDeps struct{ s *Service }

func (r *resolveDeps) ResolveDependencies(ctx context.Context, sk SkillRef) ([]Dependency, error) {
	s := r.s
	res, err := resolve.ResolveSkill(ctx, resolve.SkillRequest{
		Ref:       sk.URL + "#sha256=" + string(sk.Digest),
		Allowed:   s.allow,
		FetchType: FetchType,
		Audited:   true,
	}, resolve.Options{
		Config:  s.cfg,
		Store:   s.o.Store,
		Network: s.network,
		Offline: s.o.Offline,
		Scanner: s.o.Scanner,
		Audit:   s.o.Audit,
		TraceID: s.o.TraceID,
		Now:     s.o.Now,
	})
	if err != nil {
		return nil, err
	}
	for _, n := range res.Notices {
		s.logf("runtime fetch %s: scan: %s", sk.URL, n)
	}
	var out []Dependency
	for _, n := range res.Dependencies() {
		out = append(out, Dependency{URL: n.URL, Digest: n.SHA256, Dir: n.LocalPath})
	}
	return out, nil
}
