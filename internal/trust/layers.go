package trust

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// EnvTrustWorktree is the environment variable that, set to 1, has the
// effect of --trust-worktree.
const EnvTrustWorktree = "FULLSEND_TRUST_WORKTREE"

// The modes of a decision (Info.Mode).
const (
	// ModeOrgDir: the org layer is a fullsend dir outside every untrusted
	// work tree (or the built-in defaults when there is none).
	ModeOrgDir = "org-dir"
	// ModeTrustedRef: the org layer was read from git objects at a ref.
	ModeTrustedRef = "trusted-ref"
	// ModeWorktree: the operator trusts the work tree (--trust-worktree,
	// FULLSEND_TRUST_WORKTREE=1): nothing is a repository layer.
	ModeWorktree = "worktree"
)

// Options are the inputs of Decide.
type Options struct {
	// Cwd is the working directory (default os.Getwd).
	Cwd string
	// FullsendDir is --fullsend-dir (or its default), absolute.
	FullsendDir string
	// TargetRepo is run's --target-repo as given ("" = the repository of
	// Cwd, "none" = no repository).
	TargetRepo string
	// TrustedRef is --trusted-ref.
	TrustedRef string
	// TrustWorktree is --trust-worktree or FULLSEND_TRUST_WORKTREE=1.
	TrustWorktree bool
}

// Info is a decision as report.json records it (report.trust).
type Info struct {
	Mode string `json:"mode"`
	// OrgDir is the org fullsend dir ("" = the built-in defaults); with
	// trusted-ref it is the temporary directory the ref was extracted to.
	OrgDir string `json:"org_dir,omitempty"`
	// TrustedRef is the ref the org layer was read from.
	TrustedRef string `json:"trusted_ref,omitempty"`
	// RepositoryLayer is the fullsend dir read as a repository layer
	// ("" = none).
	RepositoryLayer string `json:"repository_layer,omitempty"`
	// Worktrees are the untrusted work trees (with ModeWorktree: trusted
	// by the operator).
	Worktrees []string `json:"worktrees,omitempty"`
}

// Decision is which inputs of one command are trusted.
type Decision struct {
	Info
	// WorktreeFullsendDir is, with trusted-ref, the work tree copy of the
	// fullsend dir the ref was read for.
	WorktreeFullsendDir string
	cleanup             func()
}

// Decide applies the trust rule to a command's options. With a trusted
// ref it extracts the org layer from git (Close removes it).
func Decide(ctx context.Context, o Options) (*Decision, error) {
	if o.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		o.Cwd = wd
	}
	d := &Decision{}
	if top, err := (Discovery{UID: -1}).FindGitRoot(o.Cwd); top != "" {
		d.Worktrees = append(d.Worktrees, top)
	} else if errors.Is(err, ErrForeignRepo) {
		// A foreign repository around the working directory: everything
		// under it is untrusted all the same.
		d.Worktrees = append(d.Worktrees, foreignTop(o.Cwd))
	}
	if t := o.TargetRepo; t != "" && t != "none" {
		if abs, err := filepath.Abs(t); err == nil && !d.inWorktree(abs) {
			d.Worktrees = append(d.Worktrees, abs)
		}
	}
	switch {
	case o.TrustedRef != "" && o.TrustWorktree:
		return nil, fmt.Errorf("--trusted-ref and --trust-worktree (or %s=1): choose one", EnvTrustWorktree)
	case o.TrustWorktree:
		d.Mode, d.OrgDir = ModeWorktree, o.FullsendDir
	case o.TrustedRef != "":
		repo, err := FindGitRoot(existingParent(o.FullsendDir))
		if err != nil {
			return nil, fmt.Errorf("--trusted-ref: %w", err)
		}
		if repo == "" {
			return nil, fmt.Errorf("--trusted-ref %s: the fullsend dir %s is not inside a git repository", o.TrustedRef, o.FullsendDir)
		}
		rel, err := filepath.Rel(repo, o.FullsendDir)
		if err != nil {
			return nil, err
		}
		dir, cleanup, err := FromRef(ctx, repo, o.TrustedRef, rel)
		if err != nil {
			return nil, err
		}
		d.Mode, d.OrgDir, d.TrustedRef, d.cleanup = ModeTrustedRef, dir, o.TrustedRef, cleanup
		d.WorktreeFullsendDir = o.FullsendDir
	default:
		d.Mode = ModeOrgDir
		if !d.inWorktree(o.FullsendDir) {
			d.OrgDir = o.FullsendDir
		}
	}
	return d, nil
}

// foreignTop is the directory holding the nearest .git above dir.
func foreignTop(dir string) string {
	d := dir
	for {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		p := filepath.Dir(d)
		if p == d {
			return dir
		}
		d = p
	}
}

// existingParent is p or its nearest existing ancestor.
func existingParent(p string) string {
	for {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		p = parent
	}
}

// Close removes what Decide extracted.
func (d *Decision) Close() {
	if d != nil && d.cleanup != nil {
		d.cleanup()
		d.cleanup = nil
	}
}

// inWorktree reports whether p is inside (or is) an untrusted work tree.
func (d *Decision) inWorktree(p string) bool {
	for _, w := range d.Worktrees {
		if Within(p, w) {
			return true
		}
	}
	return false
}

// IsRepoLayer reports whether the fullsend dir root is a repository
// layer: inside an untrusted work tree, unless the operator trusts it.
func (d *Decision) IsRepoLayer(root string) bool {
	if d == nil || d.Mode == ModeWorktree || root == "" {
		return false
	}
	if d.OrgDir != "" && root == d.OrgDir {
		return false
	}
	return d.inWorktree(root)
}

// Config is the configuration in force for a harness whose fullsend dir
// is root: the org layer's config.yaml (load reads one), with root's
// applied under the layer table when root is a repository layer. When
// root is not a repository layer it is itself trusted and its own
// config.yaml governs.
func (d *Decision) Config(root string, load func(dir string) (*config.Config, error)) (*config.Config, []string, error) {
	if !d.IsRepoLayer(root) {
		c, err := load(root)
		return c, nil, err
	}
	org := config.Default()
	if d.OrgDir != "" {
		var err error
		if org, err = load(d.OrgDir); err != nil {
			return nil, nil, err
		}
	}
	return ApplyRepoConfig(org, root)
}

// AcceptDir is the fullsend dir whose scan-accept.yaml is honoured for a
// harness whose fullsend dir is root ("" = none), and a warning when root
// is a repository layer holding one.
func (d *Decision) AcceptDir(root string) (string, string) {
	if !d.IsRepoLayer(root) {
		return root, ""
	}
	warn := ""
	if p := filepath.Join(root, scan.AcceptFile); fileExists(p) {
		warn = fmt.Sprintf("%s: not honoured: scan acceptances belong to the org fullsend dir, not to a repository layer inside the target repository's work tree (move them there, or pass --trust-worktree if you own this repository)", p)
	}
	return d.OrgDir, warn
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// Describe is the decision as report.json records it for the harness
// file whose fullsend dir is root (nil for a nil decision): the repository
// layer is root when it is one, else the harness file's directory when the
// file alone is untrusted.
func (d *Decision) Describe(root, file string) *Info {
	if d == nil {
		return nil
	}
	i := d.Info
	i.Worktrees = append([]string(nil), d.Worktrees...)
	switch {
	case d.IsRepoLayer(root):
		i.RepositoryLayer = root
	case d.Untrusted(file):
		i.RepositoryLayer = filepath.Dir(file)
	}
	return &i
}

// Untrusted reports whether the file or directory p is untrusted input:
// inside an untrusted work tree and not part of the org layer.
func (d *Decision) Untrusted(p string) bool {
	if d == nil || d.Mode == ModeWorktree || p == "" {
		return false
	}
	if d.OrgDir != "" && Within(p, d.OrgDir) {
		return false
	}
	return d.inWorktree(p)
}
