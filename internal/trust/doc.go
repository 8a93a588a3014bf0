// Package trust is fullsend's trust anchor: the one place that decides
// which of the inputs of a command the runner host may trust.
//
// # The rule
//
// The target repository's work tree is untrusted input, like remote
// content: in CI it is the pull request under review. Trusted inputs are
//
//   - the org fullsend dir the operator names (--fullsend-dir, default
//     ./.fullsend), when it is read from outside every untrusted work tree;
//   - or the files of that dir in git objects at a ref the operator names
//     (--trusted-ref REF), extracted from the object database into a
//     private temporary directory, never read from the work tree.
//
// A fullsend dir inside an untrusted work tree, named explicitly or found
// from a harness path, is a *repository layer* (the seed's per-repo
// .fullsend) on top of the org layer (or of the built-in defaults when
// there is none). A repository layer may add or override declarative files
// (harnesses, agents, skills, policies, schemas: scanned like everything
// else), narrow allowed_remote_resources, lower limits and tighten
// settings. It may never widen what the host trusts: ConfigKeys,
// HarnessFields and Files below are the one table of what it may set, and
// SECURITY.md's table is generated from it (a test keeps them equal).
//
// The untrusted work trees of a command are the git repository around the
// working directory and, for run, the --target-repo directory. An operator
// who owns the repository opts out explicitly: --trust-worktree or
// FULLSEND_TRUST_WORKTREE=1 makes a fullsend dir inside the work tree the
// org layer again; the run says so on stderr and in report.json.
//
// # Discovery
//
// FindGitRoot is the default target repository: the nearest directory at
// or above the working directory holding .git, following git's own
// safe.directory rule: a .git another user owns is not used (an error
// naming it and the way out), and the search never climbs past the user's
// home directory or onto another filesystem.
package trust
