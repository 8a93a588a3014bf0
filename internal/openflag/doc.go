// Package openflag holds the open(2) flags fullsend adds when it opens a
// path that someone else may have swapped: NoFollow refuses a symlink as the
// last path element (ELOOP) and NonBlock makes opening a FIFO without a
// writer or reader fail or return at once instead of hanging. On Unix they
// are the kernel's O_NOFOLLOW and O_NONBLOCK; elsewhere (Windows) they are 0,
// and callers keep their after-open check that the file is a regular one,
// which is then the only guard. Every caller that must not follow a link
// uses these constants rather than syscall's, so the tree builds on every
// platform the read-only commands (validate, resolve, lock, graph, scan,
// cache) serve.
package openflag
