package cas

import (
	"errors"
	"fmt"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

// Decisions a caller makes on a cache operation. They arrive wrapped in an
// *EntryError.
var (
	// ErrNotFound: no entry for the hash; fetch it (or fail when offline).
	ErrNotFound = errors.New("not in cache")
	// ErrCorrupt: the entry did not verify and has been removed; refetch it.
	ErrCorrupt = errors.New("corrupt")
	// ErrHashMismatch: bytes offered to Put do not hash to the pinned digest;
	// nothing was written.
	ErrHashMismatch = errors.New("hash mismatch")
	// ErrUnsafeDir: Open refused the cache directory (a symlink, or
	// writable by another user); nothing was read or written.
	ErrUnsafeDir = errors.New("unsafe cache directory")
)

// EntryError is an error about one cache entry.
type EntryError struct {
	Digest ref.Digest
	Err    error
}

func (e *EntryError) Error() string { return fmt.Sprintf("cache entry %s: %v", e.Digest, e.Err) }
func (e *EntryError) Unwrap() error { return e.Err }

func entryErr(d ref.Digest, err error) error { return &EntryError{Digest: d, Err: err} }

// corrupt is a verification failure found in a stable entry; Get removes
// the entry and reports it as ErrCorrupt.
type corrupt struct{ what string }

func (c *corrupt) Error() string { return c.what }

func corruptf(format string, args ...any) error { return &corrupt{what: fmt.Sprintf(format, args...)} }

// errChanged means the entry was removed or replaced while it was read.
var errChanged = errors.New("entry changed while being read")
