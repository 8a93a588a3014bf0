package resolve

import (
	"context"
	"fmt"
	"net/url"
	"slices"

	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// A forge URL naming a branch or tag ("tree/main/…") can move: the pin
// keeps the content right, but the URL may stop serving it. Every such
// node is listed in Result.MovableRefs (the CLI warns). With
// Options.ResolveCommits (`fullsend lock`), the ref is resolved to the
// commit it names now, and that commit's URL is checked to serve the
// node's pin (a fetch unless the cache holds a confirmation of it) before
// Node.Commit records it, so lock.yaml never names a commit that does not
// serve what it locked.

// commitResolver is the forge client's commit lookup; *forge.Client
// implements it.
type commitResolver interface {
	ResolveCommit(ctx context.Context, loc forge.Location) (string, error)
}

// pinCommit notes n (fetched as w) when its forge ref is a branch or tag
// and, with ResolveCommits online, sets n.Commit.
func (r *resolver) pinCommit(ctx context.Context, w want, n *Node) error {
	if w.loc == nil || w.loc.AtCommit() {
		return nil
	}
	r.mu.Lock()
	if !slices.Contains(r.movable, n.URL) {
		r.movable = append(r.movable, n.URL)
	}
	r.mu.Unlock()
	if !r.o.ResolveCommits || r.o.Offline || r.o.Network == nil {
		return nil
	}
	net, err := r.network()
	if err != nil {
		return err
	}
	cr, ok := net.Forge.(commitResolver)
	if !ok {
		return fmt.Errorf("%s: cannot resolve %q to a commit: the forge client has no commit lookup", n.URL, w.loc.Ref)
	}
	commit, err := cr.ResolveCommit(ctx, *w.loc)
	if err != nil {
		return fmt.Errorf("%s: resolving %q to a commit: %w", n.URL, w.loc.Ref, err)
	}
	at, err := w.loc.AtRef(commit)
	if err != nil {
		return fmt.Errorf("%s: %w", n.URL, err)
	}
	wc := w
	wc.url, wc.loc, wc.hitAudited = at.URL, &at, true
	if _, _, err := r.obtain(ctx, wc); err != nil {
		return fmt.Errorf("%s: %q names commit %s now: %w", n.URL, w.loc.Ref, commit, err)
	}
	n.Commit = commit
	return nil
}

// movableRefs returns the URLs pinCommit noted, sorted.
func (r *resolver) movableRefs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.movable)
	slices.Sort(out)
	return out
}

// notForge is the error for a directory URL on a host that is not a
// configured forge: it names the config.yaml entry that would make it one.
func notForge(u string) error {
	host := ref.Hostname(u)
	if hp, err := url.Parse(u); err == nil && hp.Host != "" {
		host = hp.Host
	}
	return fmt.Errorf("%s: %w; if %s is a GitHub or GitLab server, add it to config.yaml: `forges: [{host: %s, type: github}]` (type: gitlab for GitLab; api_url and token_env when they differ from the defaults), then write the URL as https://%s/OWNER/REPO/tree/REF/PATH", u, ErrNotForge, host, host, host)
}
