package trust

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// MaxRefBytes bounds what FromRef extracts.
const MaxRefBytes = 512 << 20

// FromRef extracts the directory rel (slash separated, relative to the
// top of the git repository repo; "." = all of it) as it is in the git
// objects at ref into a new private temporary directory and returns the
// extracted directory and a function removing it. It never reads the work
// tree: `git archive` reads the object database. The temporary directory
// itself is private (0700); what is inside keeps git's modes. Only regular files and
// directories are extracted (symlinks and submodules are left out).
func FromRef(ctx context.Context, repo, ref, rel string) (string, func(), error) {
	if ref == "" || strings.HasPrefix(ref, "-") || strings.ContainsAny(ref, "\x00\n") {
		return "", nil, fmt.Errorf("--trusted-ref %q: not a git revision", ref)
	}
	rel = path.Clean(filepath.ToSlash(rel))
	if rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
		return "", nil, fmt.Errorf("--trusted-ref %s: the fullsend dir %s is outside the repository %s", ref, rel, repo)
	}
	commit, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return "", nil, fmt.Errorf("--trusted-ref %s: no such commit in %s (fetch it first, e.g. git fetch origin %s)", ref, repo, ref)
	}
	c := strings.TrimSpace(string(commit))
	args := []string{"archive", "--format=tar", c}
	if rel != "." {
		args = append(args, "--", rel)
	}
	tmp, err := os.MkdirTemp("", "fullsend-trusted-ref-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	out, err := git(ctx, repo, args...)
	if err != nil {
		cleanup()
		if rel != "." {
			return "", nil, fmt.Errorf("--trusted-ref %s: %s has no %s (commit it to that ref, or name another with --trusted-ref)", ref, c[:min(12, len(c))], rel)
		}
		return "", nil, fmt.Errorf("--trusted-ref %s: git archive: %w", ref, err)
	}
	if err := untar(bytes.NewReader(out), tmp); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("--trusted-ref %s: %w", ref, err)
	}
	dir := filepath.Join(tmp, filepath.FromSlash(rel))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
}

// git runs git in repo with a fixed, minimal configuration surface and
// returns its stdout.
func git(ctx context.Context, repo string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", repo, "-c", "core.fsmonitor=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if len(out) > MaxRefBytes {
		return nil, fmt.Errorf("more than %d bytes", MaxRefBytes)
	}
	return out, nil
}

// untar writes the regular files and directories of a tar stream under
// dir; names are checked to stay inside it.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(hd.Name)
		if name == "." || name == ".." || strings.HasPrefix(name, "../") || path.IsAbs(name) || strings.ContainsAny(name, "\\\x00") {
			return fmt.Errorf("archive entry %q: not a clean relative path", hd.Name)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		switch hd.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if hd.Mode&0o100 != 0 {
				mode = 0o755
			}
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}
