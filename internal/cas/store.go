package cas

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

// EnvCacheDir overrides the cache location (CI caches).
const EnvCacheDir = "FULLSEND_CACHE_DIR"

// DefaultCacheDirName is the cache directory inside the workspace.
const DefaultCacheDirName = ".fullsend-cache"

// DefaultDir returns $FULLSEND_CACHE_DIR when set, else
// <workspace>/.fullsend-cache.
func DefaultDir(workspace string, getenv func(string) string) string {
	if getenv != nil {
		if d := getenv(EnvCacheDir); d != "" {
			return d
		}
	}
	return filepath.Join(workspace, DefaultCacheDirName)
}

// Type is the kind of a cache entry.
type Type string

const (
	TypeFile      Type = "file"      // a single file, stored as content
	TypeDirectory Type = "directory" // a tree, stored under tree/
)

// Metadata is an entry's metadata.json. SHA256 and Type are set by the
// store; the caller supplies URL, FetchTime (now when zero) and ContentType.
// A file entry whose caller gives no ContentType gets the MIME type
// content sniffing finds in its bytes (detectContentType); a directory
// entry has none.
// Entries written before content_type was recorded have none either and
// read as they are. Metadata is informational: it is not covered by the
// hash.
type Metadata struct {
	URL         string    `json:"url"`
	FetchTime   time.Time `json:"fetch_time"`
	ContentType string    `json:"content_type,omitempty"`
	SHA256      string    `json:"sha256"`
	Type        Type      `json:"type"`
	// ConfirmedURLs are the URLs a fetch from the origin has shown to
	// serve this content, each with the time of the latest such fetch (see
	// Confirm). The entry answers for these URLs only: the content is right
	// by its hash, but that a URL serves it is a claim only a fetch can
	// make.
	ConfirmedURLs []Confirmation `json:"confirmed_urls,omitempty"`
}

// Confirmation is one entry of Metadata.ConfirmedURLs.
type Confirmation struct {
	URL  string    `json:"url"`
	Time time.Time `json:"time"`
}

// Confirmed returns when a fetch last confirmed that url serves m's
// content, and whether one ever did.
func (m Metadata) Confirmed(url string) (time.Time, bool) {
	for _, c := range m.ConfirmedURLs {
		if c.URL == url {
			return c.Time, true
		}
	}
	return time.Time{}, false
}

// MaxConfirmedURLs bounds an entry's confirmed_urls; Confirm drops the
// oldest beyond it.
const MaxConfirmedURLs = 64

// TreeFile is one file of a tree entry.
type TreeFile struct {
	Path   string     // tree path, "/"-separated
	SHA256 ref.Digest // hash of the file's content
	Size   int64
}

// Entry is a published cache entry.
type Entry struct {
	Digest      ref.Digest
	Meta        Metadata
	Dir         string // resources/sha256/<hex>
	ContentPath string // file entries: Dir/content
	TreePath    string // directory entries: Dir/tree
	// Files lists a tree's files sorted by path. Set by Get and Put, not
	// by List.
	Files []TreeFile
	// Size is the bytes of all regular files in Dir, metadata included.
	Size int64
	// LastUsed is the entry's last-use time (see the package doc).
	LastUsed time.Time
}

// Reader looks entries up; every lookup verifies.
type Reader interface {
	Get(d ref.Digest) (Entry, error)
}

// Writer publishes entries atomically.
type Writer interface {
	PutFile(want ref.Digest, meta Metadata, content []byte) (Entry, error)
	PutTree(want ref.Digest, meta Metadata, files map[string][]byte) (Entry, error)
}

var (
	_ Reader = (*Store)(nil)
	_ Writer = (*Store)(nil)
)

// Store is a cache directory. Its methods are safe for concurrent use by
// many goroutines and many processes sharing the directory.
type Store struct {
	dir     string // the cache root
	entries string // <dir>/resources/sha256
	tmp     string // <dir>/resources/tmp
}

const (
	metadataName = "metadata.json"
	contentName  = "content"
	treeName     = "tree"

	putPrefix = "put-"
	rmPrefix  = "rm-"

	maxMetadataSize = 1 << 20
	putAttempts     = 4
)

// Open opens the cache at dir, creating resources/sha256 and resources/tmp
// (0700) when missing. The cache directory and the directories below it
// that the store owns must be real directories, not symlinks (a checked-out
// workspace could otherwise steer the cache, and the audit log beside it,
// anywhere), owned by this user (or root); Open refuses anything else
// (ErrUnsafeDir). Group and other write bits on a directory of ours are
// removed; a root-owned directory writable by others is refused.
func Open(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", dir, err)
	}
	s := &Store{
		dir:     abs,
		entries: filepath.Join(abs, "resources", "sha256"),
		tmp:     filepath.Join(abs, "resources", "tmp"),
	}
	// Parents first, so nothing is created inside a directory that has not
	// passed the checks.
	for _, d := range []string{abs, filepath.Dir(s.entries), s.entries, s.tmp} {
		fi, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			if err = os.MkdirAll(d, 0o700); err == nil {
				fi, err = os.Lstat(d)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("cache %s: %w", abs, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("cache %s: %w: %s is a symlink (point %s at the real directory)", abs, ErrUnsafeDir, d, EnvCacheDir)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("cache %s: %w: %s is not a directory", abs, ErrUnsafeDir, d)
		}
		if err := secureDir(d, fi); err != nil {
			return nil, fmt.Errorf("cache %s: %w: %v", abs, ErrUnsafeDir, err)
		}
	}
	return s, nil
}

// Dir returns the cache root.
func (s *Store) Dir() string { return s.dir }

// checkDigest accepts only canonical digests, so a path is never built from
// anything else.
func checkDigest(d ref.Digest) error {
	p, err := ref.ParseDigest(string(d))
	if err != nil {
		return err
	}
	if p != d {
		return fmt.Errorf("digest %q is not lower-case hex", string(d))
	}
	return nil
}

func (s *Store) entryDir(d ref.Digest) string { return filepath.Join(s.entries, string(d)) }

// PutFile stores content as a file entry. When want is non-empty the content
// must hash to it (ErrHashMismatch, nothing written); when empty the entry
// is stored under the content's hash. An entry already present and verified
// is returned as is.
func (s *Store) PutFile(want ref.Digest, meta Metadata, content []byte) (Entry, error) {
	got := ref.SHA256(content)
	if err := checkWant(want, got, "content"); err != nil {
		return Entry{}, err
	}
	meta.Type = TypeFile
	if meta.ContentType == "" {
		meta.ContentType = detectContentType(content)
	}
	return s.put(got, meta, func(r *os.Root, sy *syncer) ([]TreeFile, int64, error) {
		return nil, int64(len(content)), sy.writeFile(r, contentName, content)
	})
}

// detectContentType is the content_type of a file entry: the MIME type
// net/http's content sniffing (the WHATWG algorithm, from the first 512
// bytes) gives, e.g. "text/plain; charset=utf-8" for a Markdown or YAML
// file, "application/octet-stream" when nothing matches.
func detectContentType(content []byte) string {
	return http.DetectContentType(content)
}

// PutTree stores files (tree path -> content) as a directory entry. Paths
// must pass CheckTreePaths and the tree must hash (TreeHash) to want when
// want is non-empty (ErrHashMismatch); nothing is written otherwise.
func (s *Store) PutTree(want ref.Digest, meta Metadata, files map[string][]byte) (Entry, error) {
	got, err := TreeHash(files)
	if err != nil {
		if want != "" {
			return Entry{}, entryErr(want, err)
		}
		return Entry{}, fmt.Errorf("cache: %w", err)
	}
	if err := checkWant(want, got, "tree"); err != nil {
		return Entry{}, err
	}
	meta.Type = TypeDirectory
	return s.put(got, meta, func(r *os.Root, sy *syncer) ([]TreeFile, int64, error) {
		paths := make([]string, 0, len(files))
		for p := range files {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		if err := r.Mkdir(treeName, 0o700); err != nil {
			return nil, 0, err
		}
		sy.dirs = append(sy.dirs, treeName)
		made := map[string]bool{}
		tf := make([]TreeFile, 0, len(paths))
		var size int64
		for _, p := range paths {
			name := treeName + "/" + p
			for dir := filepath.ToSlash(filepath.Dir(name)); dir != treeName && !made[dir]; dir = filepath.ToSlash(filepath.Dir(dir)) {
				made[dir] = true
				sy.dirs = append(sy.dirs, dir)
			}
			if err := r.MkdirAll(filepath.ToSlash(filepath.Dir(name)), 0o700); err != nil {
				return nil, 0, err
			}
			if err := sy.writeFile(r, name, files[p]); err != nil {
				return nil, 0, err
			}
			tf = append(tf, TreeFile{Path: p, SHA256: ref.SHA256(files[p]), Size: int64(len(files[p]))})
			size += int64(len(files[p]))
		}
		return tf, size, nil
	})
}

func checkWant(want, got ref.Digest, what string) error {
	if want == "" {
		return nil
	}
	if err := checkDigest(want); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	if got != want {
		return entryErr(want, fmt.Errorf("%w: %s has sha256 %s", ErrHashMismatch, what, got))
	}
	return nil
}

// errRetry asks put to start over (lost a race to a remover or to Clean).
var errRetry = errors.New("retry")

type writeFunc func(r *os.Root, sy *syncer) (files []TreeFile, size int64, err error)

func (s *Store) put(d ref.Digest, meta Metadata, write writeFunc) (Entry, error) {
	if err := checkMeta(meta); err != nil {
		return Entry{}, entryErr(d, fmt.Errorf("metadata: %w", err))
	}
	meta.SHA256 = string(d)
	if meta.FetchTime.IsZero() {
		meta.FetchTime = time.Now().UTC()
	}
	mdata, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return Entry{}, entryErr(d, err)
	}
	mdata = append(mdata, '\n')
	for attempt := 1; ; attempt++ {
		e, err := s.Get(d)
		if err == nil {
			return e, nil
		}
		if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt) {
			return Entry{}, err
		}
		e, err = s.publish(d, meta, mdata, write)
		if errors.Is(err, errRetry) && attempt < putAttempts {
			continue
		}
		if errors.Is(err, errRetry) {
			return Entry{}, entryErr(d, errors.New("publication kept racing with removal; giving up"))
		}
		if err != nil {
			return Entry{}, entryErr(d, err)
		}
		return e, nil
	}
}

// publish writes the entry into a fresh temp dir and renames it into place.
func (s *Store) publish(d ref.Digest, meta Metadata, mdata []byte, write writeFunc) (Entry, error) {
	tmp, err := os.MkdirTemp(s.tmp, putPrefix+string(d[:12])+"-*")
	if err != nil {
		return Entry{}, err
	}
	published := false
	defer func() {
		if !published {
			os.RemoveAll(tmp)
		}
	}()
	unlock, err := lockDir(tmp)
	if errors.Is(err, fs.ErrNotExist) {
		return Entry{}, errRetry // Clean took it between mkdir and lock
	}
	if err != nil {
		return Entry{}, err
	}
	defer unlock()
	r, err := os.OpenRoot(tmp)
	if err != nil {
		return Entry{}, retryIfGone(err)
	}
	defer r.Close()

	sy := &syncer{}
	if err := sy.writeFile(r, metadataName, mdata); err != nil {
		return Entry{}, retryIfGone(err)
	}
	files, size, err := write(r, sy)
	if err != nil {
		return Entry{}, retryIfGone(err)
	}
	if err := sy.sync(r); err != nil {
		return Entry{}, retryIfGone(err)
	}
	testOnlyBeforeRename()
	final := s.entryDir(d)
	if err := os.Rename(tmp, final); err != nil {
		if errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY) {
			// Another writer published the same hash first. Its bytes hash
			// to d; verify them rather than trust them.
			os.RemoveAll(tmp)
			e, gerr := s.Get(d)
			if gerr == nil {
				return e, nil
			}
			if errors.Is(gerr, ErrNotFound) || errors.Is(gerr, ErrCorrupt) {
				return Entry{}, errRetry
			}
			return Entry{}, gerr
		}
		return Entry{}, retryIfGone(err)
	}
	published = true
	// Both directories changed with the rename; their fsyncs overlap.
	tmpSynced := make(chan error, 1)
	go func() { tmpSynced <- syncPath(s.tmp) }()
	if err := errors.Join(syncPath(s.entries), <-tmpSynced); err != nil {
		return Entry{}, err
	}
	now := time.Now()
	_ = os.Chtimes(final, now, now) // best effort: the LRU clock only
	e := Entry{
		Digest:   d,
		Meta:     meta,
		Dir:      final,
		Files:    files,
		Size:     size + int64(len(mdata)),
		LastUsed: now,
	}
	e.setPaths()
	return e, nil
}

func retryIfGone(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return errRetry
	}
	return err
}

func (e *Entry) setPaths() {
	switch e.Meta.Type {
	case TypeFile:
		e.ContentPath = filepath.Join(e.Dir, contentName)
	case TypeDirectory:
		e.TreePath = filepath.Join(e.Dir, treeName)
	}
}

// syncer remembers which files and directories of a temp entry need an
// fsync before it is published.
type syncer struct{ files, dirs []string }

// syncParallel bounds the fsyncs of one entry in flight at once. They are
// independent (every one must finish before the rename, in no particular
// order), and a journaling filesystem commits concurrent ones together:
// one after the other, a three-file skill paid about ten commits on the
// critical path of a cold resolution.
const syncParallel = 16

// testOnlySync, when set (tests only), runs before each fsync of a temp
// entry with the name synced ("." for the entry root).
var testOnlySync func(name string)

// sync fsyncs every file written and every directory made, at most
// syncParallel at a time, and returns the first error once all are done.
func (sy *syncer) sync(r *os.Root) error {
	names := append(append(slices.Clone(sy.files), sy.dirs...), ".")
	sem := make(chan struct{}, syncParallel)
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if testOnlySync != nil {
				testOnlySync(name)
			}
			errs[i] = syncIn(r, name)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// syncIn fsyncs name (a file or a directory) below r.
func syncIn(r *os.Root, name string) error {
	f, err := r.Open(name)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeFile creates name below r with data; sync makes it durable.
func (sy *syncer) writeFile(r *os.Root, name string, data []byte) error {
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		sy.files = append(sy.files, name)
	}
	return err
}

func syncPath(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// testOnlyBeforeRename is a hook for crash tests.
var testOnlyBeforeRename = func() {}

// remove takes the entry out of the namespace with one rename, then deletes
// it. When want is non-nil and the renamed directory is not that directory
// (it was replaced in between), it is put back if possible.
func (s *Store) remove(d ref.Digest, want os.FileInfo) error {
	if err := checkDigest(d); err != nil {
		return err
	}
	return s.removeDir(s.entryDir(d), want)
}

func (s *Store) removeDir(path string, want os.FileInfo) error {
	rm := filepath.Join(s.tmp, rmPrefix+filepath.Base(path)[:min(12, len(filepath.Base(path)))]+"-"+randText())
	if err := os.Rename(path, rm); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // someone else removed it
		}
		return err
	}
	if want != nil {
		if fi, err := os.Lstat(rm); err == nil && !os.SameFile(fi, want) {
			// We took a freshly published entry; give it back.
			if os.Rename(rm, path) == nil {
				return nil
			}
		}
	}
	return os.RemoveAll(rm)
}
