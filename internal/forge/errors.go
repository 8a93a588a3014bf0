package forge

import (
	"errors"

	"github.com/fullsend-ai/fullsend/internal/fetch"
)

// Sentinels a caller can branch on; they arrive wrapped in an *Error.
// Failures of the underlying requests keep their fetch sentinels
// (fetch.ErrStatus, fetch.ErrTooLarge, ...) in the chain as well.
var (
	// ErrNotForge: the URL is on no configured forge host.
	ErrNotForge = errors.New("not a forge URL: skill directories can only come from a configured forge (github.com, gitlab.com, or forges: in config.yaml)")
	// ErrBadURL: the URL is on a forge host but is not a usable tree, blob
	// or raw URL.
	ErrBadURL = errors.New("not a usable forge URL")
	// ErrKind: a file URL where a directory is needed, or the reverse.
	ErrKind = errors.New("wrong kind of forge URL")
	// ErrNotFound: the directory or file does not exist at that ref, or is
	// not visible with the credentials sent (the message says which).
	ErrNotFound = errors.New("not found")
	// ErrSymlink: the directory holds a symbolic link.
	ErrSymlink = errors.New("symbolic links are not allowed in skill directories")
	// ErrSubmodule: the directory holds a git submodule.
	ErrSubmodule = errors.New("git submodules are not allowed in skill directories")
	// ErrBlobMismatch: a file's bytes do not hash to the git blob id the
	// listing gave. errors.Is(err, fetch.ErrHashMismatch) holds too.
	ErrBlobMismatch = errors.New("git blob SHA-1 mismatch")
	// ErrTooMany: the listing exceeds MaxTreeFiles, MaxListPages or
	// MaxListRequests.
	ErrTooMany = errors.New("directory listing too large")
	// ErrRateLimited: the forge kept answering 429/403 rate-limit responses
	// after the retries, or asked to wait longer than MaxRetryWait. (A 5xx
	// still failing after the retries keeps only fetch.ErrStatus.)
	ErrRateLimited = errors.New("rate limited")
)

// Error is every error returned by this package: the forge URL the caller
// asked for and the reason.
type Error struct {
	URL string
	Err error
}

// Error renders one redacted line: "forge URL: reason".
func (e *Error) Error() string { return fetch.Redact("forge " + e.URL + ": " + e.Err.Error()) }

func (e *Error) Unwrap() error { return e.Err }
