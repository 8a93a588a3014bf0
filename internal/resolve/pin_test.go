package resolve

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/resolve/resolvetest"
)

// TestPin: a branch URL of a skill directory and of a file is resolved to
// the branch's commit, fetched, hashed (tree hash, sha256), scanned as
// remote content, cached and audited; the pinned reference then resolves
// offline from the cache.
func TestPin(t *testing.T) {
	w, skill, agent := rustWorld(t)
	ctx := context.Background()
	commit := w.srv.Commit(w.key)
	p, err := Pin(ctx, PinRequest{URL: w.tree("skills/rust"), Kind: "skill", Allowed: []string{w.prefix()}}, w.opts())
	if err != nil {
		t.Fatal(err)
	}
	if p.Ref != "main" || p.Commit != commit || p.SHA256 != skill || p.Type != cas.TypeDirectory || p.Files != 2 ||
		!strings.Contains(p.URL, "/tree/"+commit+"/skills/rust") || p.Pinned != p.URL+"#sha256="+string(skill) {
		t.Fatalf("pinned: %+v", p)
	}
	if _, err := w.store.Get(skill); err != nil {
		t.Fatalf("not cached: %v", err)
	}
	if w.scanner.Calls() != 1 || len(w.audit.entries) != 1 || w.audit.entries[0].URL != p.URL || w.audit.entries[0].FetchType != FetchStatic || w.audit.entries[0].CacheHit {
		t.Fatalf("scan calls %d, audit %+v", w.scanner.Calls(), w.audit.entries)
	}
	o := w.opts()
	o.Offline = true
	if _, err := ResolveSkill(ctx, SkillRequest{Ref: p.Pinned, Allowed: []string{w.prefix()}}, o); err != nil {
		t.Fatalf("pinned skill offline: %v", err)
	}
	// A file (blob URL; a tree URL of a file field is taken as the blob).
	for _, u := range []string{w.blob("agents/a.md"), w.tree("agents/a.md")} {
		p, err := Pin(ctx, PinRequest{URL: u, Kind: "agent", Allowed: []string{w.prefix()}}, w.opts())
		if err != nil || p.SHA256 != agent || p.Type != cas.TypeFile || !strings.Contains(p.URL, "/blob/"+commit+"/agents/a.md") || string(p.Content) != "agent\n" {
			t.Fatalf("agent %s: %+v %v", u, p, err)
		}
	}
}

// TestPinRefusals: outside the allowlist nothing is fetched; offline is an
// error; a pin in the URL is refused; blocked content is not cached.
func TestPinRefusals(t *testing.T) {
	w, _, _ := rustWorld(t)
	ctx := context.Background()
	if _, err := Pin(ctx, PinRequest{URL: w.tree("skills/rust"), Kind: "skill", Allowed: []string{"https://" + w.srv.WebHost() + "/other/"}}, w.opts()); !errors.Is(err, ref.ErrNotAllowed) || w.netUsed != 0 {
		t.Fatalf("outside the allowlist: %v (network used %d)", err, w.netUsed)
	}
	o := w.opts()
	o.Offline = true
	if _, err := Pin(ctx, PinRequest{URL: w.tree("skills/rust"), Kind: "skill", Allowed: []string{w.prefix()}}, o); !errors.Is(err, ErrOffline) {
		t.Fatalf("offline: %v", err)
	}
	if _, err := Pin(ctx, PinRequest{URL: w.tree("skills/rust") + "#sha256=" + strings.Repeat("0", 64), Kind: "skill", Allowed: []string{w.prefix()}}, w.opts()); err == nil || !strings.Contains(err.Error(), "already carries") {
		t.Fatalf("pinned URL: %v", err)
	}
	r := newRepo()
	evil := r.file("agents/evil.md", "x "+resolvetest.Evil)
	w.srv.AddRepo("o/r@evil", r.Files)
	_, err := Pin(ctx, PinRequest{URL: w.srv.BlobURL("o/r@evil", "agents/evil.md"), Kind: "agent", Allowed: []string{w.prefix()}}, w.opts())
	if err == nil || !strings.Contains(err.Error(), "evil") {
		t.Fatalf("blocked: %v", err)
	}
	if _, err := w.store.Get(evil); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("blocked content cached: %v", err)
	}
}
