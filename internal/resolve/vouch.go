package resolve

import (
	"context"
	"fmt"
	"time"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/progress"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// A cache entry is right by its hash, whatever URL named it. That a URL
// serves that content is a separate claim, and only a fetch from the URL
// makes it: the cache answers for a URL→pin pair only when a fetch
// confirmed it (cas.Metadata.ConfirmedURLs), so a misspelled path, a
// commit that does not exist or a branch that moved fail on the
// developer's machine as they would in CI with an empty cache.
//
// A forge URL whose ref is a branch or tag may have moved since it was
// confirmed: its confirmation holds for MovableRefTTL only, then it is
// fetched again. Online, an unconfirmed pair is fetched from its origin
// (not the registry tier, which is keyed by hash) and verified; the URL is
// then recorded. Offline (or without a network), the cached content is
// used and the node is marked Unverified with one warning line;
// `fullsend lock` refuses to record such a node.

// MovableRefTTL is how long a fetch confirms a URL→pin pair whose forge
// ref is a branch or tag rather than a commit id.
const MovableRefTTL = time.Hour

// confirmer is the part of the cache that records confirmed URLs;
// *cas.Store implements it. A Store without it confirms nothing durably.
type confirmer interface {
	Confirm(d ref.Digest, url string, at time.Time) (cas.Entry, error)
}

// stillConfirmed reports whether e records a confirmation of w's URL that
// still holds at now (see StillConfirmed).
func stillConfirmed(w want, e cas.Entry, now time.Time) bool {
	return StillConfirmed(e.Meta, w.url, w.loc, now)
}

// StillConfirmed reports whether meta records a confirmation of url that
// still holds at now: any for a plain URL (loc nil) or a forge URL at a
// commit id, one younger than MovableRefTTL for a branch or tag. It is
// the one rule deciding whether a cache entry may answer for a URL.
func StillConfirmed(meta cas.Metadata, url string, loc *forge.Location, now time.Time) bool {
	at, ok := meta.Confirmed(url)
	if !ok {
		return false
	}
	return loc == nil || loc.AtCommit() || now.Sub(at) < MovableRefTTL
}

// vouch returns e, a verified cache entry for w.digest, for w once w.url
// is known to serve it: recorded (and durable), confirmed earlier in this
// resolution, or fetched now from the origin. Offline it returns e marked
// unverified.
func (r *resolver) vouch(ctx context.Context, w want, e cas.Entry) (cas.Entry, bool, error) {
	key := w.url + "\x00" + string(w.digest)
	r.mu.Lock()
	done := r.confirmed[key]
	r.mu.Unlock()
	if done || stillConfirmed(w, e, r.now()) {
		r.auditHit(w, true, audit.SourceCache)
		traceSource(ctx, audit.SourceCache, cachedSize(e))
		return e, true, nil
	}
	if r.o.Offline || r.o.Network == nil {
		why := "--offline"
		if !r.o.Offline {
			why = "no network"
		}
		r.mu.Lock()
		first := !r.unverified[w.url]
		r.unverified[w.url] = true
		r.mu.Unlock()
		if first {
			r.warn(fmt.Sprintf("%s: unverified: sha256 %s is cached, but no fetch has confirmed that this URL serves it (%s); run online to confirm", w.url, w.digest, why))
		}
		r.auditHit(w, true, audit.SourceCache)
		traceSource(ctx, audit.SourceCache, cachedSize(e))
		return e, true, nil
	}
	n, err := r.network()
	if err != nil {
		return cas.Entry{}, false, err
	}
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return cas.Entry{}, false, ctx.Err()
	}
	start := time.Now()
	progress.Emit(r.o.Events, progress.Event{Kind: progress.FetchStart, Name: w.url})
	files, content, err := r.fromOrigin(ctx, n, w)
	<-r.sem
	size := int64(len(content))
	for _, b := range files {
		size += int64(len(b))
	}
	ev := progress.Event{Kind: progress.FetchEnd, Name: w.url, Bytes: size, Duration: time.Since(start), Files: len(files)}
	if err != nil {
		err = fmt.Errorf("sha256 %s is cached, but this URL does not serve it: %w", w.digest, err)
		ev.Err = err.Error()
	}
	progress.Emit(r.o.Events, ev)
	if err != nil {
		return cas.Entry{}, false, err
	}
	r.recordConfirmed(w, e)
	r.auditHit(w, false, audit.SourceForge)
	traceSource(ctx, audit.SourceForge, size)
	r.progress(w, len(files), size, ev.Duration, audit.SourceForge)
	return e, false, nil
}

// recordConfirmed notes that w.url served w.digest: for the rest of this
// resolution, and in the cache when the store records confirmations. A
// failure to record is not an error (the next resolution fetches again).
func (r *resolver) recordConfirmed(w want, e cas.Entry) {
	r.mu.Lock()
	r.confirmed[w.url+"\x00"+string(w.digest)] = true
	r.mu.Unlock()
	now := r.now()
	if at, ok := e.Meta.Confirmed(w.url); ok && now.Sub(at) < time.Minute {
		return // just recorded (a fresh fetch stores its URL)
	}
	if c, ok := r.o.Store.(confirmer); ok {
		_, _ = c.Confirm(w.digest, w.url, now)
	}
}

// isUnverified reports whether url was used from the cache without a
// fetch confirming it.
func (r *resolver) isUnverified(url string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unverified[url]
}

// Unverified lists the remote nodes of res (its harness first) used from
// the cache without a fetch confirming their URL serves their hash.
func (res *Result) Unverified() []*Node {
	var out []*Node
	if res.Graph == nil {
		return nil
	}
	for _, n := range append([]*Node{res.Graph.Root}, res.Graph.Nodes...) {
		if n != nil && n.Unverified {
			out = append(out, n)
		}
	}
	return out
}
