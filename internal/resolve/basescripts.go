package resolve

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/lock"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// BaseScript is a script field a remote base harness brings into a local
// harness: once the base is composed its value is a URL, which only a
// vendored copy can serve (vendorBaseScripts).
type BaseScript struct {
	// Field is the harness field ("pre_script", "validation_loop.script",
	// "forge.github.post_script", …).
	Field string
	// URL is the script's URL as the composed base names it (no pin).
	URL string
	// Vendored is the vendor: entry of Options.Lock that serves it, if any.
	Vendored *lock.Vendored
}

// BaseScripts loads the local harness at path with its base: chain
// composed (remote bases fetched through the cache: verified, scanned,
// audited as base_resource) and lists the scripts its remote bases name
// that the harness leaves to them, in field order. It does not check the
// harness further: a script field that is a URL is exactly what it looks
// for. It uses Options' Root, Layers, Config, Forge, HarnessCheck, Store,
// Network, Scanner, Audit and Lock.
func BaseScripts(ctx context.Context, path string, o Options) ([]BaseScript, error) {
	r, err := newResolver(o)
	if err != nil {
		return nil, err
	}
	r.start(ctx)
	defer r.finish()
	root := o.Root
	if root == "" {
		root = harness.FindRoot(path)
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, err
	}
	h, err := harness.Load(path, harness.LoadOptions{
		Root: root, Layers: o.Layers, Config: r.cfg, Forge: o.Forge, ForgeOptional: o.ForgeOptional,
		FetchBase: r.fetchBase, Context: ctx, Check: o.HarnessCheck,
	})
	if err != nil {
		return nil, err
	}
	if r.auditErr != nil {
		return nil, fmt.Errorf("audit log: %w", r.auditErr)
	}
	var out []BaseScript
	for _, fr := range h.Refs() {
		if fr.Kind != harness.Script || fr.EnvExpanded() || !r.baseRefs[fr.Value] {
			continue
		}
		rf, err := ref.Parse(fr.Value)
		if err != nil || rf.Kind != ref.URL {
			continue
		}
		bs := BaseScript{Field: fr.Field, URL: rf.URL}
		if o.Lock != nil {
			bs.Vendored = r.vendoredAt(rf.URL)
		}
		out = append(out, bs)
	}
	return out, nil
}

// vendorServes reports whether the vendor: entry v stands in for the
// script URL u a remote base names: the same URL, or the same repository
// path at the branch or tag v follows (forge URLs parsed with forges).
func vendorServes(v lock.Vendored, u string, forges []config.Forge) bool {
	if v.URL == u {
		return true
	}
	if v.Ref == "" || repoPathOf(v.URL, forges) != repoPathOf(u, forges) {
		return false
	}
	loc, err := forge.Parse(u, forges)
	return err == nil && loc.Ref == v.Ref
}

// repoPathOf is the forge, repository and path of the forge URL u at any
// ref (u itself when it is not a forge URL).
func repoPathOf(u string, forges []config.Forge) string {
	loc, err := forge.Parse(u, forges)
	if err != nil {
		return u
	}
	return loc.Forge.Host + "\x00" + loc.Owner + "/" + loc.Repo + "\x00" + loc.Path
}
