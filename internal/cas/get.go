package cas

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// touchFresh is the resolution of the LRU clock: a Get records the use of
// an entry (sets its directory's modification time) unless the recorded
// last use is less than this old, so a burst of hits on one entry does
// not write its inode every time. Eviction order is unaffected at any
// coarser scale. Verification never depends on it.
const touchFresh = time.Minute

// getAttempts bounds how often Get re-reads an entry that changed under it.
const getAttempts = 5

// Get returns the entry for d after verifying it completely (see the
// package doc) and records the use for eviction. Errors: ErrNotFound when
// absent; ErrCorrupt, naming what did not match, when the entry failed
// verification (it has been removed); other errors are I/O errors and leave
// the entry in place.
func (s *Store) Get(d ref.Digest) (Entry, error) {
	return s.get(d, &readOpts{})
}

// MaxKeptFile bounds each file GetTreeFiles returns.
const MaxKeptFile = 1 << 20

// GetTreeFiles is Get for a directory entry that also returns the content
// of the tree files named in paths (tree paths; at most MaxKeptFile bytes
// each): the bytes the verification itself read and hashed, so they are
// exactly the pinned content, without a second read that another process
// could race. A named path that is not in the tree, or is larger, is
// absent from the map; a file entry is returned with no files (the caller
// checks Entry.Meta.Type).
func (s *Store) GetTreeFiles(d ref.Digest, paths ...string) (Entry, map[string][]byte, error) {
	k := &readOpts{keep: paths, limit: MaxKeptFile}
	e, err := s.get(d, k)
	if err != nil {
		return Entry{}, nil, err
	}
	if e.Meta.Type != TypeDirectory {
		return e, nil, nil
	}
	return e, k.files, nil
}

// readOpts are the options of one Get: the files whose bytes the read
// keeps (it collects them in files). A Get records the use of the entry;
// a nil *readOpts (Verify) keeps nothing and records nothing.
type readOpts struct {
	keep  []string // tree paths; contentName for a file entry's content
	limit int64    // larger files are not kept
	files map[string][]byte
	// touched: read already recorded the use, through its handle on the
	// entry directory (Entry.LastUsed is set).
	touched bool
}

// want is how many bytes of the file p to keep at most (0: do not keep).
func (k *readOpts) want(p string) int64 {
	if k == nil || !slices.Contains(k.keep, p) {
		return 0
	}
	return k.limit
}

func (k *readOpts) add(p string, b []byte) {
	if k.files == nil {
		k.files = map[string][]byte{}
	}
	k.files[p] = b
}

func (s *Store) get(d ref.Digest, k *readOpts) (Entry, error) {
	if err := checkDigest(d); err != nil {
		return Entry{}, fmt.Errorf("cache: %w", err)
	}
	e, err := s.verifyEntry(d, k)
	if err != nil {
		return Entry{}, err
	}
	if k.touched {
		return e, nil
	}
	now := time.Now()
	if os.Chtimes(e.Dir, now, now) == nil { // best effort: the LRU clock only
		e.LastUsed = now
	}
	return e, nil
}

// verifyEntry reads and verifies d, removing it when corrupt.
func (s *Store) verifyEntry(d ref.Digest, k *readOpts) (Entry, error) {
	for range getAttempts {
		if k != nil {
			k.files, k.touched = nil, false // nothing of an attempt that failed
		}
		e, id, err := s.read(d, k)
		var c *corrupt
		switch {
		case err == nil:
			return e, nil
		case errors.Is(err, errChanged):
			continue
		case errors.As(err, &c):
			if rerr := s.remove(d, id); rerr != nil {
				return Entry{}, entryErr(d, fmt.Errorf("%w: %s (removing it failed: %v)", ErrCorrupt, c.what, rerr))
			}
			return Entry{}, entryErr(d, fmt.Errorf("%w: %s (entry removed)", ErrCorrupt, c.what))
		default:
			return Entry{}, entryErr(d, err)
		}
	}
	if _, err := os.Lstat(s.entryDir(d)); errors.Is(err, fs.ErrNotExist) {
		return Entry{}, entryErr(d, ErrNotFound)
	}
	return Entry{}, entryErr(d, errChanged)
}

// dirEnt is one directory entry: its name and type bits (fs.ModeType).
type dirEnt struct {
	name string
	typ  fs.FileMode
}

// entryFS is a handle on a directory of an entry being verified: the
// entry directory itself or a directory below tree/. Names are single path
// elements of that directory; nothing is ever resolved through a symlink.
// read_linux.go implements it on directory descriptors, read_other.go on
// an os.Root.
type entryFS interface {
	// list returns the directory's entries sorted by name.
	list() ([]dirEnt, error)
	// sub opens the subdirectory name.
	sub(name string) (entryFS, error)
	// readSmall reads the regular file name, at most limit bytes.
	readSmall(name string, limit int64) ([]byte, error)
	// hash streams the regular file name through h; when keep > 0 and
	// the file has at most keep bytes it also returns them.
	hash(name string, h hash.Hash, buf []byte, keep int64) (ref.Digest, int64, []byte, error)
	close()
}

// testOnlyEntryFS lets tests inject I/O faults below checkEntry (the
// identity otherwise).
var testOnlyEntryFS = func(dir entryFS) entryFS { return dir }

// checkEntry verifies the entry whose directory is dir against d, keeping
// the bytes k asks for.
func checkEntry(dir entryFS, d ref.Digest, k *readOpts) (Entry, error) {
	dir = testOnlyEntryFS(dir)
	ents, err := dir.list()
	if err != nil {
		return Entry{}, err
	}
	var hasMeta, hasContent, hasTree bool
	for _, de := range ents {
		t := de.typ
		switch {
		case de.name == metadataName && t.IsRegular():
			hasMeta = true
		case de.name == contentName && t.IsRegular():
			hasContent = true
		case de.name == treeName && t.IsDir():
			hasTree = true
		default:
			return Entry{}, corruptf("unexpected %s %q in entry", typeName(t), de.name)
		}
	}
	if !hasMeta {
		return Entry{}, corruptf("%s missing", metadataName)
	}
	mdata, err := dir.readSmall(metadataName, maxMetadataSize)
	if err != nil {
		return Entry{}, err
	}
	meta, err := parseMeta(mdata)
	if err != nil {
		return Entry{}, corruptf("%s: %v", metadataName, err)
	}
	if err := checkMeta(meta); err != nil {
		return Entry{}, corruptf("%s: %v", metadataName, err)
	}
	if meta.SHA256 != string(d) {
		return Entry{}, corruptf("%s names sha256 %q", metadataName, meta.SHA256)
	}
	e := Entry{Digest: d, Meta: meta, Size: int64(len(mdata))}
	buf := getBuf()
	defer putBuf(buf)
	h := sha256.New()
	switch {
	case meta.Type == TypeFile && hasContent && !hasTree:
		got, n, b, err := dir.hash(contentName, h, *buf, k.want(contentName))
		if err != nil {
			return Entry{}, err
		}
		e.Size += n
		if got != d {
			return Entry{}, corruptf("content has sha256 %s", got)
		}
		if b != nil {
			k.add(contentName, b)
		}
	case meta.Type == TypeDirectory && hasTree && !hasContent:
		t, err := dir.sub(treeName)
		if err != nil {
			return Entry{}, err
		}
		var files []TreeFile
		err = walkTree(t, "", h, *buf, &files, k)
		t.close()
		if err != nil {
			return Entry{}, err
		}
		paths := make([]string, len(files))
		for i, f := range files {
			paths[i] = f.Path
			e.Size += f.Size
		}
		if err := CheckTreePaths(paths); err != nil {
			return Entry{}, corruptf("%v", err)
		}
		got, err := treeHashOf(files)
		if err != nil {
			return Entry{}, corruptf("%v", err)
		}
		if got != d {
			return Entry{}, corruptf("tree has sha256 %s", got)
		}
		slices.SortFunc(files, func(a, b TreeFile) int { return strings.Compare(a.Path, b.Path) })
		e.Files = files
	default:
		return Entry{}, corruptf("type %q does not match the entry's layout (content: %t, tree/: %t)", meta.Type, hasContent, hasTree)
	}
	return e, nil
}

// walkTree hashes every regular file below dir (the tree path rel, "" for
// tree/ itself), appending them with tree paths relative to tree/.
// Anything but directories and regular files makes the entry corrupt.
func walkTree(dir entryFS, rel string, h hash.Hash, buf []byte, out *[]TreeFile, k *readOpts) error {
	ents, err := dir.list()
	if err != nil {
		return err
	}
	for _, de := range ents {
		p := de.name
		if rel != "" {
			p = rel + "/" + p
		}
		if err := CheckTreePath(p); err != nil {
			return corruptf("%v", err)
		}
		switch t := de.typ; {
		case t.IsDir():
			sub, err := dir.sub(de.name)
			if err != nil {
				return err
			}
			err = walkTree(sub, p, h, buf, out, k)
			sub.close()
			if err != nil {
				return err
			}
		case t.IsRegular():
			sum, n, b, err := dir.hash(de.name, h, buf, k.want(p))
			if err != nil {
				return err
			}
			if b != nil {
				k.add(p, b) // verified with the whole tree before Get returns
			}
			*out = append(*out, TreeFile{Path: p, SHA256: sum, Size: n})
		default:
			return corruptf("tree/%s is a %s", p, typeName(t))
		}
	}
	return nil
}

// maxPrealloc bounds what hashKeep allocates on the word of fstat; a file
// really that large grows the buffer as it is read.
const maxPrealloc = 64 << 20

// hashKeep reads a file of size bytes (by fstat) to its end through read,
// which returns 0 at the end, hashing it and returning its bytes; a file
// that grew past keep is hashed to its end but not returned.
func hashKeep(read func([]byte) (int, error), size, keep int64, h hash.Hash, buf []byte) (int64, []byte, error) {
	data := make([]byte, 0, min(max(size, 0), maxPrealloc)+1)
	for {
		if len(data) == cap(data) {
			if int64(len(data)) >= keep {
				h.Write(data)
				n := int64(len(data))
				for {
					k, err := read(buf)
					if err != nil {
						return n, nil, err
					}
					if k == 0 {
						return n, nil, nil
					}
					h.Write(buf[:k])
					n += int64(k)
				}
			}
			data = slices.Grow(data, 4<<10)
		}
		k, err := read(data[len(data):min(cap(data), len(data)+bufSize)])
		if err != nil {
			return int64(len(data)), nil, err
		}
		if k == 0 {
			h.Write(data)
			return int64(len(data)), data, nil
		}
		data = data[:len(data)+k]
	}
}

// sumHex is h's sum as a digest.
func sumHex(h hash.Hash) ref.Digest {
	var sum [sha256.Size]byte
	return ref.Digest(hex.EncodeToString(h.Sum(sum[:0])))
}

// readSmall reads at most limit bytes of name through r (listings).
func readSmall(r *os.Root, name string, limit int64) ([]byte, error) {
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, name, limit)
}

// readLimited reads f to its end; more than max bytes is corrupt.
func readLimited(f io.Reader, name string, max int64) ([]byte, error) {
	b, err := limit.ReadAll(f, max)
	if tl := (*limit.TooLargeError)(nil); errors.As(err, &tl) {
		return nil, corruptf("%s is larger than %d bytes", name, max)
	}
	return b, err
}

// readHash streams the rest of f through h.
func readHash(f *os.File, h hash.Hash, buf []byte) (int64, error) {
	var n int64
	for {
		k, err := f.Read(buf)
		if k > 0 {
			h.Write(buf[:k])
			n += int64(k)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// bufSize is the read size for hashing: large enough to amortise the read
// syscalls, small enough to stay in L2 between read and hash.
const bufSize = 256 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

func getBuf() *[]byte  { return bufPool.Get().(*[]byte) }
func putBuf(b *[]byte) { bufPool.Put(b) }

func typeName(t fs.FileMode) string {
	switch {
	case t.IsRegular():
		return "regular file"
	case t.IsDir():
		return "directory"
	case t&fs.ModeSymlink != 0:
		return "symlink"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeDevice != 0:
		return "device"
	default:
		return "special file"
	}
}

// trimRootPath shortens a *PathError from os.Root to its operation and
// name relative to the entry.
func trimRootPath(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, fs.ErrNotExist) {
			return pe.Path + " missing"
		}
		return pe.Op + " " + pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}

func randText() string { return rand.Text() }

// maxMetaString bounds metadata.json's informational strings.
const maxMetaString = 8 << 10

// checkMeta rejects metadata whose informational strings could carry line
// breaks or terminal escapes into `cache ls` and logs: URL and ContentType
// must be valid UTF-8 without control characters (C0, DEL, C1), at most
// maxMetaString bytes. Nothing else in metadata.json is trusted: the hash
// and type are checked against the entry's name and layout.
func checkMeta(m Metadata) error {
	if len(m.ConfirmedURLs) > MaxConfirmedURLs {
		return fmt.Errorf("confirmed_urls lists more than %d URLs", MaxConfirmedURLs)
	}
	fields := []struct{ name, v string }{{"url", m.URL}, {"content_type", m.ContentType}}
	for _, c := range m.ConfirmedURLs {
		fields = append(fields, struct{ name, v string }{"confirmed_urls", c.URL})
	}
	for _, f := range fields {
		if len(f.v) > maxMetaString {
			return fmt.Errorf("%s is longer than %d bytes", f.name, maxMetaString)
		}
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("%s is not valid UTF-8", f.name)
		}
		if strings.IndexFunc(f.v, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }) >= 0 {
			return fmt.Errorf("%s holds a control character", f.name)
		}
	}
	return nil
}

// readMeta reads dir/metadata.json for a listing: only a regular file,
// never through a symlink, never more than maxMetadataSize bytes (a FIFO or
// /dev/zero planted there cannot hang or exhaust `cache ls`).
func readMeta(dir string) (Metadata, bool) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return Metadata{}, false
	}
	defer r.Close()
	fi, err := r.Lstat(metadataName)
	if err != nil || !fi.Mode().IsRegular() {
		return Metadata{}, false
	}
	b, err := readSmall(r, metadataName, maxMetadataSize)
	if err != nil {
		return Metadata{}, false
	}
	var m Metadata
	if json.Unmarshal(b, &m) != nil || checkMeta(m) != nil {
		return Metadata{}, false
	}
	return m, true
}

// ReadFile returns file entry d and its content. The bytes are the ones
// Get's verification read and hashed (one read, no second pass), so they
// are exactly the pinned content whatever happens to the cache afterwards;
// prefer it to reading Entry.ContentPath, which another process of the
// same user could rewrite after Get. Errors are those of Get; a directory
// entry is an error naming its type.
func (s *Store) ReadFile(d ref.Digest) (Entry, []byte, error) {
	k := &readOpts{keep: []string{contentName}, limit: math.MaxInt64}
	e, err := s.get(d, k)
	if err != nil {
		return Entry{}, nil, err
	}
	if e.Meta.Type != TypeFile {
		return Entry{}, nil, entryErr(d, fmt.Errorf("a %s entry, not a file", e.Meta.Type))
	}
	b, ok := k.files[contentName]
	if !ok {
		return Entry{}, nil, entryErr(d, errChanged)
	}
	return e, b, nil
}

// parseMeta decodes metadata.json (encoding/json; content_type is
// optional: entries written before it was recorded have none).
func parseMeta(b []byte) (Metadata, error) {
	var m Metadata
	err := json.Unmarshal(b, &m)
	return m, err
}
