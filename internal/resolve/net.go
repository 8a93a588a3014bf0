package resolve

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/openflag"
	"github.com/fullsend-ai/fullsend/internal/progress"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/scan"
	"github.com/fullsend-ai/fullsend/internal/trace"
)

// Scanner scans fetched content before it is cached; *scan.Pipeline
// implements it.
type Scanner interface {
	ScanFiles(ctx context.Context, files map[string][]byte, m scan.Meta) (*scan.Result, error)
}

// FileFetcher fetches one pinned file; *fetch.Client implements it.
type FileFetcher interface {
	GetPinned(ctx context.Context, url string, want ref.Digest) ([]byte, error)
}

// ForgeFetcher downloads forge directories and files; *forge.Client
// implements it.
type ForgeFetcher interface {
	FetchTree(ctx context.Context, loc forge.Location) (map[string][]byte, error)
	FetchFile(ctx context.Context, loc forge.Location) ([]byte, error)
}

// Store is the content-addressed cache; *cas.Store implements it.
type Store interface {
	Get(d ref.Digest) (cas.Entry, error)
	PutFile(want ref.Digest, meta cas.Metadata, content []byte) (cas.Entry, error)
	PutTree(want ref.Digest, meta cas.Metadata, files map[string][]byte) (cas.Entry, error)
}

// Auditor records fetches; *audit.Log implements it.
type Auditor interface {
	Append(e audit.Entry) error
}

// Network is what a cache miss needs.
type Network struct {
	Files FileFetcher
	Forge ForgeFetcher
	// Registry, when not nil, is the shared cache tier asked before the
	// forge (config.yaml cache.oci; registry.go). Push pushes every
	// verified, scanned forge fetch to it. RegistryErr is why the
	// configured registry could not be set up (the forge is used).
	Registry    Registry
	Push        bool
	RegistryErr error
}

// NewNetwork builds the fetch and forge clients the org config allows:
// allowed_domains, allowed_private_networks, timeout and size limit from
// cfg, forges from cfg.Forges with tokens read through getenv. tweak, when
// not nil, may adjust the fetch options (tests: the test CA and resolver).
func NewNetwork(cfg *config.Config, getenv func(string) string, tweak func(*fetch.Options)) *Network {
	o := fetchOptions(cfg, tweak)
	fc := fetch.New(o)
	n := &Network{Files: fc, Forge: forge.New(fc, cfg.Forges, getenv)}
	n.Registry, n.Push, n.RegistryErr = newRegistry(cfg, getenv, o)
	return n
}

// fetchOptions is the fetch policy of cfg, adjusted by tweak (tests).
func fetchOptions(cfg *config.Config, tweak func(*fetch.Options)) fetch.Options {
	rr := cfg.Security.RemoteResources
	o := fetch.Options{
		AllowedDomains:         cfg.EffectiveAllowedDomains(),
		AllowedPrivateNetworks: rr.AllowedPrivateNetworks,
		Timeout:                rr.Timeout,
		MaxSize:                rr.MaxSizeBytes,
	}
	if tweak != nil {
		tweak(&o)
	}
	return o
}

// Sentinels.
var (
	ErrOffline      = errors.New("not in the cache and --offline forbids fetching it")
	ErrNotForge     = errors.New("directories can only be fetched from a configured forge (tree URL)")
	ErrCycle        = errors.New("dependency cycle")
	ErrTooDeep      = errors.New("dependency chain too deep")
	ErrTooMany      = errors.New("too many resources")
	ErrNotConfirmed = errors.New("untrusted harness URL not confirmed")
	ErrStale        = errors.New("lock file out of date")
	ErrScanBlocked  = scan.ErrBlocked
	ErrNoScanner    = errors.New("no scanner configured: remote content cannot be cached unscanned")
	ErrWrongType    = errors.New("wrong resource type")
)

// Error is a resolution failure with the chain of references that led to
// it.
type Error struct {
	Chain []string
	Err   error
}

func (e *Error) Error() string {
	return strings.Join(e.Chain, " -> ") + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// flight is one in-flight acquisition of a hash.
type flight struct {
	done  chan struct{}
	url   string // the URL it acquires the hash for
	entry cas.Entry
	hit   bool
	err   error
}

// want describes what a remote node needs from the cache or network.
type want struct {
	url       string
	digest    ref.Digest
	typ       cas.Type
	kind      string
	loc       *forge.Location // forge location, nil for plain https
	allowedBy string
	fetchType string
	// hitAudited: the caller has audited obtaining this resource, so a
	// cache hit of it is not audited again (a fetch still is).
	hitAudited bool
}

// network returns the fetchers, building them once.
func (r *resolver) network() (*Network, error) {
	r.netOnce.Do(func() {
		if r.o.Network == nil {
			r.netErr = errors.New("no network configured")
			return
		}
		r.net, r.netErr = r.o.Network()
	})
	return r.net, r.netErr
}

// obtain returns the cache entry for w: from the cache when present
// (verified), otherwise fetched, verified, scanned and cached. Concurrent
// calls for the same hash share one acquisition.
func (r *resolver) obtain(ctx context.Context, w want) (cas.Entry, bool, error) {
	r.mu.Lock()
	if f, ok := r.flights[w.digest]; ok {
		r.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return cas.Entry{}, false, ctx.Err()
		}
		if f.err == nil && f.entry.Meta.Type != w.typ {
			return cas.Entry{}, false, fmt.Errorf("%w: sha256 %s is a %s, referenced as a %s", ErrWrongType, w.digest, f.entry.Meta.Type, w.typ)
		}
		if f.err != nil {
			return f.entry, true, f.err
		}
		if f.url != w.url {
			// The content is right by its hash; that w.url serves it is
			// another claim (vouch.go).
			return r.vouch(ctx, w, f.entry)
		}
		r.auditHit(w, true, audit.SourceCache)
		return f.entry, true, nil
	}
	f := &flight{done: make(chan struct{}), url: w.url}
	r.flights[w.digest] = f
	r.mu.Unlock()
	sctx, span := startResource(ctx, w)
	f.entry, f.hit, f.err = r.acquire(sctx, w)
	trace.End(span, f.err)
	close(f.done)
	return f.entry, f.hit, f.err
}

func (r *resolver) acquire(ctx context.Context, w want) (cas.Entry, bool, error) {
	e, err := r.o.Store.Get(w.digest)
	switch {
	case err == nil:
		if e.Meta.Type != w.typ {
			return cas.Entry{}, false, fmt.Errorf("%w: sha256 %s is cached as a %s, referenced as a %s", ErrWrongType, w.digest, e.Meta.Type, w.typ)
		}
		return r.vouch(ctx, w, e)
	case errors.Is(err, cas.ErrNotFound), errors.Is(err, cas.ErrCorrupt):
	default:
		return cas.Entry{}, false, err
	}
	if r.o.Offline {
		return cas.Entry{}, false, fmt.Errorf("%s: %w", w.url, ErrOffline)
	}
	if r.o.Scanner == nil {
		return cas.Entry{}, false, fmt.Errorf("%s: %w", w.url, ErrNoScanner)
	}
	n, err := r.network()
	if err != nil {
		return cas.Entry{}, false, err
	}
	start := time.Now()
	progress.Emit(r.o.Events, progress.Event{Kind: progress.FetchStart, Name: w.url})
	e, size, source, err := r.fetchScanStore(ctx, n, w)
	ev := progress.Event{Kind: progress.FetchEnd, Name: w.url, Bytes: size, Duration: time.Since(start)}
	if err != nil {
		ev.Err = err.Error()
	} else if w.typ == cas.TypeDirectory {
		ev.Files = len(e.Files)
	}
	progress.Emit(r.o.Events, ev)
	if err != nil {
		return cas.Entry{}, false, err
	}
	r.auditHit(w, false, source)
	traceSource(ctx, source, size)
	r.progress(w, ev.Files, size, ev.Duration, source)
	return e, false, nil
}

// fetchScanStore downloads w (see download), scans the content and
// stores it in the cache; it returns the entry, the number of bytes
// fetched and where they came from (audit.SourceRegistry or
// audit.SourceForge). What came from the forge is then pushed to the
// registry tier when configured (in the background; see push).
func (r *resolver) fetchScanStore(ctx context.Context, n *Network, w want) (cas.Entry, int64, string, error) {
	files, content, source, err := r.download(ctx, n, w)
	if err != nil {
		return cas.Entry{}, 0, "", err
	}
	e, size, err := r.scanStore(ctx, w, files, content, source == audit.SourceForge)
	if err != nil {
		return cas.Entry{}, 0, "", err
	}
	if source == audit.SourceForge {
		r.recordConfirmed(w, e)
		r.push(n, w, files, content)
	}
	return e, size, source, nil
}

// scanStore scans what download returned (remote policy) and stores it in
// the cache only when the scan lets it through. fromOrigin says w.url
// itself served the bytes (recorded as a confirmed URL), not the registry.
func (r *resolver) scanStore(ctx context.Context, w want, files map[string][]byte, content []byte, fromOrigin bool) (cas.Entry, int64, error) {
	meta := cas.Metadata{URL: w.url, FetchTime: r.now().UTC()}
	if fromOrigin {
		meta.ConfirmedURLs = []cas.Confirmation{{URL: w.url, Time: meta.FetchTime}}
	}
	m := scan.Meta{Path: w.url, Origin: scan.Remote, Kind: scanKind(w.kind)}
	if w.typ == cas.TypeDirectory {
		if err := r.scan(ctx, w.url, files, m); err != nil {
			return cas.Entry{}, 0, err
		}
		e, err := r.o.Store.PutTree(w.digest, meta, files)
		if err != nil {
			return cas.Entry{}, 0, err
		}
		var size int64
		for _, b := range files {
			size += int64(len(b))
		}
		return e, size, nil
	}
	dir, name := path.Split(w.url)
	m.Path = strings.TrimSuffix(dir, "/")
	if err := r.scan(ctx, w.url, map[string][]byte{name: content}, m); err != nil {
		return cas.Entry{}, 0, err
	}
	e, err := r.o.Store.PutFile(w.digest, meta, content)
	if err != nil {
		return cas.Entry{}, 0, err
	}
	return e, int64(len(content)), nil
}

// scan runs the scan pipeline over files fetched from url: a finding that
// blocks is the error, notices are kept for the result.
func (r *resolver) scan(ctx context.Context, url string, files map[string][]byte, m scan.Meta) error {
	res, err := r.o.Scanner.ScanFiles(ctx, files, m)
	if err != nil {
		return fmt.Errorf("scanning %s: %w", url, err)
	}
	if err := res.Err(); err != nil {
		return err
	}
	r.notice(res.Notices)
	return nil
}

// download fetches w's bytes and verifies them against the pin: from the
// registry tier when it has them (bounded by RegistryConcurrency), else
// from the forge or https host (holding a slot of the concurrency bound
// while it does). It returns where they came from. Registry content that
// fails verification is reported (a warning) and the forge is asked; if
// that fails too, the error names both.
func (r *resolver) download(ctx context.Context, n *Network, w want) (map[string][]byte, []byte, string, error) {
	files, content, ok, refused := r.fromRegistry(ctx, n, w)
	if ok {
		return files, content, audit.SourceRegistry, nil
	}
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, "", ctx.Err()
	}
	files, content, err := r.fromOrigin(ctx, n, w)
	<-r.sem
	if err != nil {
		if refused != nil {
			err = fmt.Errorf("%w (after the registry copy was refused: %v)", err, refused)
		}
		return nil, nil, "", err
	}
	return files, content, audit.SourceForge, nil
}

// fromOrigin fetches w's bytes from the forge (or the https host of a
// plain file URL) and verifies them against the pin.
func (r *resolver) fromOrigin(ctx context.Context, n *Network, w want) (map[string][]byte, []byte, error) {
	if w.typ == cas.TypeDirectory {
		if w.loc == nil {
			return nil, nil, notForge(w.url)
		}
		files, err := n.Forge.FetchTree(ctx, *w.loc)
		if err != nil {
			return nil, nil, err
		}
		if err := verifyTree(w, files); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", w.url, err)
		}
		return files, nil, nil
	}
	if w.loc != nil && w.loc.Kind == forge.Blob {
		b, err := n.Forge.FetchFile(ctx, *w.loc)
		if err != nil {
			return nil, nil, err
		}
		if err := verifyFile(w, b); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", w.url, err)
		}
		return nil, b, nil
	}
	u := w.url
	if w.loc != nil {
		u = w.loc.URL
	}
	b, err := n.Files.GetPinned(ctx, u, w.digest)
	if err != nil {
		return nil, nil, err
	}
	return nil, b, nil
}

func scanKind(kind string) string {
	switch kind {
	case "agent", "skill", "policy", "schema", "plugin", "profile", "provider":
		return kind
	}
	return "other"
}

func (r *resolver) auditHit(w want, hit bool, source string) {
	if r.o.Audit == nil || (hit && w.hitAudited) {
		return
	}
	err := r.o.Audit.Append(audit.Entry{
		TraceID: r.traceID, FetchTime: r.now().UTC(), URL: w.url, SHA256: string(w.digest),
		FetchType: w.fetchType, AllowedBy: w.allowedBy, CacheHit: hit, Source: source,
	})
	if err != nil {
		r.mu.Lock()
		if r.auditErr == nil {
			r.auditErr = err
		}
		r.mu.Unlock()
	}
}

func (r *resolver) progress(w want, files int, size int64, d time.Duration, source string) {
	if r.o.Progress == nil {
		return
	}
	what := fmt.Sprintf("%d bytes", size)
	if w.typ == cas.TypeDirectory {
		what = fmt.Sprintf("%d files, %d bytes", files, size)
	}
	r.progressMu.Lock()
	from := ""
	if source == audit.SourceRegistry {
		from = " from the registry"
	}
	fmt.Fprintf(r.o.Progress, "fullsend: fetched %s%s (%s, %s)\n", w.url, from, what, d.Round(time.Millisecond))
	r.progressMu.Unlock()
}

func (r *resolver) notice(ns []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range ns {
		if !r.noticeSeen[n] {
			r.noticeSeen[n] = true
			r.notices = append(r.notices, n)
		}
	}
}

// readTree reads the regular files below dir, keyed by their
// slash-separated path relative to dir (other kinds are skipped).
func readTree(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(fp string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(fp)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, fp)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// hashLocal hashes a local file or directory (regular files only; the
// tree hash of package cas) and lists a directory's files.
func hashLocal(p string) (ref.Digest, cas.Type, []cas.TreeFile, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", "", nil, err
	}
	if !fi.IsDir() {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", "", nil, err
		}
		return ref.SHA256(b), cas.TypeFile, nil, nil
	}
	files, err := readTree(p)
	if err != nil {
		return "", "", nil, err
	}
	d, err := cas.TreeHash(files)
	if err != nil {
		return "", "", nil, fmt.Errorf("%s: %w", p, err)
	}
	var list []cas.TreeFile
	for _, k := range slices.Sorted(maps.Keys(files)) {
		list = append(list, cas.TreeFile{Path: k, SHA256: ref.SHA256(files[k]), Size: int64(len(files[k]))})
	}
	return d, cas.TypeDirectory, list, nil
}

// readHarness reads the harness file rf from its cache entry e, checks
// that the bytes read still hash to rf's pin (name says what changed if
// not) and parses them.
func (r *resolver) readHarness(e cas.Entry, rf ref.Ref, name string) ([]byte, *harness.Harness, error) {
	b, err := r.readEntry(e)
	if err != nil {
		return nil, nil, err
	}
	if ref.SHA256(b) != rf.Digest {
		return nil, nil, fmt.Errorf("%s: cache entry changed while being read", name)
	}
	h, err := harness.Parse(rf.URL, b)
	if err != nil {
		return nil, nil, err
	}
	return b, h, nil
}

// readEntry reads the content of a file entry that Get has just verified.
// It does not follow a symlink swapped in after the check, refuses anything
// but a regular file, and reads at most the fetch size limit (the caller
// re-hashes what it got, so a change after Get is caught as well).
func (r *resolver) readEntry(e cas.Entry) ([]byte, error) {
	f, err := os.OpenFile(e.ContentPath, os.O_RDONLY|openflag.NoFollow|openflag.NonBlock, 0)
	if err != nil {
		return nil, fmt.Errorf("cache entry %s: %w", e.Digest, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cache entry %s: %w", e.Digest, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("cache entry %s: content is not a regular file", e.Digest)
	}
	max := r.cfg.Security.RemoteResources.MaxSizeBytes
	if max <= 0 {
		max = config.DefaultMaxSizeBytes
	}
	b, err := limit.ReadAll(f, max)
	if tl := (*limit.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, fmt.Errorf("cache entry %s: content exceeds %d bytes", e.Digest, max)
	}
	if err != nil {
		return nil, fmt.Errorf("cache entry %s: %w", e.Digest, err)
	}
	return b, nil
}
