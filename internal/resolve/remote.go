package resolve

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/netguard"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// resolveRemote resolves a harness given as a pinned https URL (seed 000
// open question 1, option A).
func (r *resolver) resolveRemote(ctx context.Context, target string) (*Result, error) {
	rf, err := ref.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("harness %w", err)
	}
	if err := rf.RequireDigest(); err != nil {
		return nil, fmt.Errorf("harness %w", err)
	}
	host := ref.Hostname(rf.URL)
	if _, ok := netguard.MatchHost(host, r.cfg.EffectiveAllowedDomains()); !ok {
		return nil, fmt.Errorf("harness %s: host %s is not allowed: add a prefix for it to allowed_remote_resources in config.yaml (allowed_domains defaults to the hosts of that list), or list it under security.remote_resources.allowed_domains", rf.URL, host)
	}
	rr := r.cfg.Security.RemoteResources
	idx, trusted := ref.MatchPrefix(rf.URL, rr.TrustedHarnessPrefixes)
	allowedBy := "confirmed"
	switch {
	case trusted:
		allowedBy = fmt.Sprintf("trusted_harness_prefixes[%d]", idx)
	case r.o.Yes:
		allowedBy = "confirmed (--yes)"
	}
	w := want{url: rf.URL, digest: rf.Digest, typ: cas.TypeFile, kind: "harness", allowedBy: allowedBy, fetchType: FetchStatic}
	if w.loc, err = r.fileLoc(rf.URL); err != nil {
		return nil, fmt.Errorf("harness %w", err)
	}
	// Before the harness is fetched we cannot list what it pulls from, and
	// fetching it (verified, scanned) is harmless; nothing else is fetched
	// until the user has confirmed.
	e, hit, err := r.obtain(ctx, w)
	if err != nil {
		return nil, fmt.Errorf("harness %w", err)
	}
	data, top, err := r.readHarness(e, rf, "harness "+rf.URL)
	if err != nil {
		return nil, err
	}
	if !trusted && !r.o.Yes {
		domains := domainsOf(rf.URL, top)
		prompt := fmt.Sprintf("harness %s is not under security.remote_resources.trusted_harness_prefixes.\nIt references resources from: %s.\nContinue? [y/N] ", rf.URL, strings.Join(domains, ", "))
		if r.o.Confirm == nil {
			return nil, fmt.Errorf("harness %s: %w: it pulls from %s; re-run with --yes to confirm, or add its prefix to security.remote_resources.trusted_harness_prefixes", rf.URL, ErrNotConfirmed, strings.Join(domains, ", "))
		}
		ok, err := r.o.Confirm(prompt)
		if err != nil {
			return nil, fmt.Errorf("harness %s: %w", rf.URL, err)
		}
		if !ok {
			return nil, fmt.Errorf("harness %s: %w", rf.URL, ErrNotConfirmed)
		}
		allowedBy = "confirmed (prompt)"
	}
	h, err := harness.LoadRemote(ctx, rf, data, harness.LoadOptions{Config: r.cfg, Forge: r.o.Forge, ForgeOptional: r.o.ForgeOptional, FetchBase: r.fetchBase})
	if err != nil {
		return nil, err
	}
	root := &Node{
		Kind: "harness", Type: cas.TypeFile, URL: rf.URL, LocalPath: e.ContentPath, SHA256: rf.Digest,
		Remote: true, CacheHit: hit, Unverified: r.isUnverified(rf.URL), AllowedBy: allowedBy, FetchType: FetchStatic,
		key: rf.String(), base: rf.URL, container: rf.URL,
	}
	if err := r.pinCommit(ctx, w, root); err != nil {
		return nil, fmt.Errorf("harness %w", err)
	}
	res := &Result{Loaded: h, Source: rf.String(), SHA256: rf.Digest, Remote: true}
	if err := r.walk(ctx, h, root, res); err != nil {
		return nil, err
	}
	return res, nil
}

// domainsOf lists the hosts a remote harness pulls from: its own and the
// host of every reference (relative ones resolve to its host).
func domainsOf(u string, h *harness.Harness) []string {
	out := []string{ref.Hostname(u)}
	add := func(v string) {
		if v == "" || strings.Contains(v, "${") {
			return
		}
		if rf, err := ref.ResolveRef(u, v); err == nil {
			if d := ref.Hostname(rf.URL); !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	add(h.Base)
	for _, fr := range h.Refs() {
		add(fr.Value)
	}
	return out
}
