// Package audit owns fullsend's append-only JSON Lines logs: the fetch
// audit log (<cache>/audit.jsonl, one Entry per static or runtime fetch,
// cache hits included, each saying in "source" where the bytes came from:
// the local cache, the shared registry tier or the forge) and, through
// AppendJSONL, any other JSONL record file (the scanner's findings log).
//
// # Rules
//
//   - A file is only ever appended to: it is opened with O_APPEND|O_CREATE
//     and never truncated or rewritten. New files are created 0600 and a
//     missing parent directory 0700 (umask may only remove bits). Only a
//     regular file is written: a symlink at the log's path is refused
//     (O_NOFOLLOW), never followed, so a checked-out workspace cannot point
//     the log at a shell start-up file; a FIFO is refused without
//     blocking.
//   - Each record is encoded as one line of JSON (encoding/json escapes
//     newlines inside strings) and written with a single write(2) call on
//     an O_APPEND descriptor. On local filesystems the kernel appends such a
//     write as a unit, so records from many goroutines and many processes
//     never interleave. (Network filesystems such as NFS do not promise
//     this.)
//   - A short write is reported as an error, never completed by a second
//     write that another writer's record could land in front of.
//   - Every append opens the file anew (no descriptor is held between
//     appends, so a replaced or removed log is never written through a
//     stale handle). On Unix it is four system calls on a raw descriptor
//     (open, fstat, write, close); the parent directory is created only
//     when the open reports it missing.
//
// # Failure
//
// Errors name the file and the reason. A failed append leaves the records
// already in the file untouched; at worst a record is missing or (on a
// short write after a full disk) its line is cut off, which a reader skips
// as a line that does not parse.
package audit
