// Package rundir is the one place fullsend decides where run directories
// live and the one way it reads and writes inside them.
//
// Where: runs started without --workspace or FULLSEND_RUNS_DIR live in the
// user's state directory ($XDG_STATE_HOME/fullsend, else
// ~/.local/state/fullsend), under runs/<name>-<hash>/ where <name> and
// <hash> come from the workspace (the current directory by default): the
// runs of one checkout never mix with another's, and nothing a repository
// commits is ever taken for a run.
//
// How: a run directory is untrusted input. Someone may have planted it
// (a pull request that commits .fullsend/runs/<id>/ when --workspace names
// the checkout) or swapped its files for symlinks. Every access goes
// through a Dir, which holds the directory as an os.Root (no path can
// leave it) and also refuses a symlink at any element of a relative path,
// a file that is not regular and a file not owned by the current user.
// New files are created O_EXCL, rewrites are a temporary file renamed over
// the target, appends reopen an existing regular file the user owns.
//
// Trust: a resumable run is bound to the user who created it. Key returns
// a per-user secret kept in the state directory (0600, created on first
// use); Chain computes the HMAC-SHA256 chain a transcript carries, one MAC
// per line, so a line that was added, changed, reordered or copied from
// another run (or another user) does not verify.
package rundir
