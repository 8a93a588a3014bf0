package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/fullsend-ai/fullsend/internal/rundir"
)

// What fullsend writes into a user's tree must never show up in `git
// status`: the run directories (<workspace>/.fullsend/runs) and the cache
// (<workspace>/.fullsend-cache, or $FULLSEND_CACHE_DIR) each hold a
// .gitignore containing "*", which hides the directory's content and the
// .gitignore itself. The fullsend dir itself is NOT ignored: its
// config.yaml, harnesses and lock.yaml are meant to be committed. When
// fullsend creates <workspace>/.fullsend only to hold runs/, that directory
// contains nothing git would list, so it stays invisible too.

// gitignoreName and gitignoreBody are the file written into fullsend's own
// directories.
const (
	gitignoreName = ".gitignore"
	gitignoreBody = "# Written by fullsend: nothing in this directory belongs in version control.\n*\n"
)

// prepareRunsDir is a run's PrepareRunsDir hook: the runs directory,
// created with fullsend's .gitignore. The runs directory may be in a
// checkout (--workspace): it must be a real directory of the user
// (package rundir), and the .gitignore is created in it O_EXCL, never
// through a symlink.
func prepareRunsDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	d, err := rundir.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	err = d.WriteNew(gitignoreName, []byte(gitignoreBody), 0o644)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: writing %s: %w", dir, gitignoreName, err)
	}
	return nil
}

// writeGitignore adds fullsend's .gitignore to an existing directory.
func writeGitignore(dir string) error {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	defer r.Close()
	f, err := r.OpenFile(gitignoreName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: writing %s: %w", dir, gitignoreName, err)
	}
	_, err = f.WriteString(gitignoreBody)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Remove(gitignoreName)
		return fmt.Errorf("%s: writing %s: %w", dir, gitignoreName, err)
	}
	return nil
}

// ignoreIfPresent adds the .gitignore to dir when dir exists (used after
// commands that may have created the cache as a side effect, e.g. the
// findings log of `fullsend scan`).
func ignoreIfPresent(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() {
		return nil
	}
	return writeGitignore(dir)
}

// ignoreCache adds the .gitignore to an opened cache directory. Failing
// to is only a warning: a read-only cache (CI, --offline) still works.
func (e *Env) ignoreCache(dir string) {
	if err := writeGitignore(dir); err != nil {
		fmt.Fprintf(e.Stderr, "fullsend: warning: cache %s\n", oneLine(err.Error()))
	}
}
