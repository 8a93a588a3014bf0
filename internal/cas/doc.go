// Package cas is fullsend's content-addressed cache of fetched resources.
//
// It owns everything under <cache>/resources/: published entries, temporary
// directories of writers in progress, and the removal area. The cache
// directory is $FULLSEND_CACHE_DIR, or <workspace>/.fullsend-cache (see
// DefaultDir). It also owns the file and tree hash formats, which are pinned
// in harnesses and lock files, and the one function deciding which tree
// paths are safe (CheckTreePath / CheckTreePaths).
//
// This package is security-relevant: a bug here lets unverified bytes reach
// an agent. It imports only the standard library and internal/ref.
//
// # Integrity formats
//
// A file's hash is sha256 of its bytes, written as 64 lower-case hex digits.
//
// A tree's hash (a skill directory) covers its regular files only. For every
// file, make the line
//
//	PATH ":" HEX "\n"
//
// where PATH is the file's path relative to the tree root with "/" between
// segments (no leading "./"), and HEX is the file hash. Sort the lines
// bytewise (as byte strings, including the ":" and the hex: this is not the
// same as sorting the paths, e.g. "SKILL.md.orig:..." sorts before
// "SKILL.md:..." because '.' < ':'), concatenate them (each keeps its "\n", so
// the text is the lines joined with "\n" plus one final "\n") and take sha256
// of that text. It equals this shell pipeline run in the tree root:
//
//	find . -type f | sed 's|^\./||' |
//	  while IFS= read -r f; do printf '%s:%s\n' "$f" "$(sha256sum <"$f" | cut -d' ' -f1)"; done |
//	  LC_ALL=C sort | sha256sum
//
// An empty tree has no hash (ErrEmptyTree). Directories, empty or not, do not
// contribute. This is byte for byte the format DESIGN.md specifies and real
// fullsend pins use.
//
// # Tree paths
//
// Every tree path, whether it comes from a forge listing or from walking a
// cached tree, passes CheckTreePath: non-empty, at most MaxTreePathLen bytes,
// valid UTF-8, relative ("/"-separated, no leading "/"), no empty, "." or ".."
// segment, no segment longer than MaxTreeSegmentLen bytes, and no NUL,
// backslash, newline or other control character. CheckTreePaths also rejects
// a set in which two paths are equal under Unicode simple case folding, or in
// which a path is both a file and a directory ("a" and "a/b"), since such a
// tree cannot be laid out the same way on every filesystem. Symlinks,
// submodules and any other non-regular entry are rejected by the callers that
// see types (forge listings, and Get when it walks tree/).
//
// # Layout
//
//	<cache>/resources/sha256/<hex>/metadata.json  url, fetch_time, content_type, sha256, type, confirmed_urls
//	<cache>/resources/sha256/<hex>/content        a file entry's bytes, or
//	<cache>/resources/sha256/<hex>/tree/...       a directory entry's files
//	<cache>/resources/tmp/put-*                   a writer's directory in progress
//	<cache>/resources/tmp/rm-*                    an entry being removed
//	<cache>/resources/tmp/meta-*                  Confirm's new metadata.json
//
// confirmed_urls lists the URLs a fetch has shown to serve the entry, each
// with the time of the latest such fetch ({"url", "time"}). Confirm adds
// one: under the entry directory's flock it verifies the entry, writes the
// new metadata.json under resources/tmp and renames it over the old one,
// so the entry never holds a foreign file and no confirmation is lost to a
// concurrent one. Deciding whether a confirmation still holds (a branch
// may move) is package resolve's.
//
// content_type is a file entry's MIME type as the caller gave it, else as
// net/http's DetectContentType sniffs it from the content ("text/plain;
// charset=utf-8" for Markdown, YAML or JSON text); directory entries have
// none, nor do file entries written before it was recorded, and all read
// the same.
//
// Directories are created 0700 and files 0600. Entry paths are built only
// from validated digests; no caller string ever becomes a path element except
// tree paths that passed CheckTreePaths, and those only below tree/.
//
// Open refuses (ErrUnsafeDir) a cache directory, resources/,
// resources/sha256 or resources/tmp that is a symlink or not a directory,
// or that another user (root excepted) owns: the default cache lives in the
// workspace, which may be a checked-out repository, and a symlink there
// would steer every write (the audit log's included) elsewhere. Group and
// other write bits on those directories are removed. An entry that is a
// symlink, or holds one, is corrupt; removing it removes the link, never
// its target.
//
// # Publication and reading
//
// A writer checks everything first (paths, hash against the pin), then
// writes the whole entry into a fresh directory under resources/tmp (same
// filesystem), fsyncs every file and directory, and publishes it with one
// rename to resources/sha256/<hex>, then fsyncs the parent. So an entry is
// either absent or complete; readers never see a partial entry. A writer that
// loses a race to another writer of the same hash (EEXIST/ENOTEMPTY) verifies
// the existing entry and succeeds. A crashed writer leaves only its put-*
// directory, which List ignores and Clean removes (a live writer holds an
// flock on its directory, so Clean can tell the two apart).
//
// Every Get re-verifies the entry: metadata.json must name the same hash and
// type, the entry may hold nothing else, and the content (or the tree,
// rehashed from what is on disk, regular files only) must hash to the entry's
// name. A corrupt entry is removed and Get returns an error wrapping
// ErrCorrupt naming the hash and what did not match; the caller refetches it
// (or fails when offline). Removal first renames the entry into
// resources/tmp/rm-* and only then deletes it, so readers never see half a
// removal. Reads go through a handle on the entry directory, and an entry
// that was removed or replaced while being read is re-read, not reported as
// corrupt. An I/O error (permissions, EMFILE, EIO) is returned as such and
// never removes an entry. Files of 64 KiB and more are hashed from a
// read-only mapping (no copy); one that shrinks while mapped is reported
// corrupt, never a crash.
//
// On Linux the walk uses directory descriptors and raw system calls (about
// 40 for a four-file tree in three directories, against about 120 through
// os.Root, which re-resolves every path from the entry root and registers
// every file with the runtime poller): each name is opened with openat
// relative to the directory that listed it, one element at a time, with
// O_NOFOLLOW (a symlink is never followed) and O_NONBLOCK (a FIFO swapped
// in after the listing cannot block); the type getdents reports is
// confirmed by fstat on the opened file; a filesystem that does not report
// types is asked with an O_PATH open, which never opens a device. A read
// that returns fewer bytes than asked for and ends exactly at the size
// fstat reported is the end of the file (read(2) of a regular file is short
// only at its end), so the read that would return 0 is skipped; the bytes
// hashed are then the whole file as fstat measured it, and a file that grew
// meanwhile is read on to its real end. The use is recorded on the verified
// directory through its descriptor (futimens), unless the recorded last
// use is less than a minute old (see Eviction). Elsewhere the same checks
// run through os.Root.
//
// Verification covers the moment of Get. The returned paths are then used by
// the caller; protection against another process of the same user rewriting
// the cache between Get and use is out of scope (the cache is 0700, and Open
// makes sure no other user can write to it). Callers therefore use what Get
// returns at once and never re-derive it. Content a caller needs in memory
// comes from the verification's own read, never from a second one:
// ReadFile returns a file entry's bytes exactly as Get hashed them, and
// GetTreeFiles the bytes of named tree files (SKILL.md, at most
// MaxKeptFile each) as the tree verification hashed them, so either is
// exactly the pinned content at one read's cost. A tree is copied or
// uploaded from TreePath right after Get, and a caller that needs
// byte-exact trees rehashes what it copied.
//
// metadata.json is informational and not covered by the hash: only its
// sha256 and type are used, and both are checked against the entry's name
// and layout. Its url and content_type must be valid UTF-8 without control
// characters (Put refuses others, Get reports the entry corrupt, List shows
// empty metadata), so a planted entry cannot put terminal escapes into
// `cache ls`. List reads metadata.json only as a small regular file.
//
// # Eviction
//
// The last-use time of an entry is the modification time of its directory
// (resources/sha256/<hex>): set when the entry is published and on every
// successful Get, never by the entry's content, which is immutable. The
// clock's resolution is one minute: a Get within a minute of the recorded
// use (on Linux, read from the verified directory's descriptor) leaves it,
// so a burst of hits does not rewrite the inode each time; this only
// decides whether to write the time, never whether to verify. It does
// not depend on atime or mount options. Clean(maxSize) removes stale temporary
// directories, then evicts entries least recently used first until the total
// size (the bytes of all regular files in the remaining entries, metadata
// included) is at most maxSize; Clean(0) removes every entry.
//
// # Errors
//
// ErrNotFound, ErrCorrupt and ErrHashMismatch are the decisions callers make;
// they arrive wrapped in an *EntryError naming the hash. Unsafe tree paths
// are *PathError values matching ErrUnsafePath. Other errors are I/O errors
// and leave the cache as it was, except for a temporary directory that Clean
// removes.
package cas
