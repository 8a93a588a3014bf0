package run

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// StageDir is the run directory's private copy of the local resources the
// runtime uploads (the agent definition, local skills and plugins).
const StageDir = "staged"

// maxStagedFile bounds one staged file (as the harness files are bounded).
const maxStagedFile = 10 << 20

// stage copies the local agent file, skills and plugins into the run
// directory and points the plan at the copies, so that what the host scan
// reads and what the runtime uploads are the same bytes, read once through
// an os.Root: a local path is checked at validation and then read again by
// name only here, where a component swapped for a symlink leading out of
// the fullsend dir (or out of the resource's own directory) fails instead
// of being followed. Remote resources come from the verified cache and are
// left as they are.
func (x *execution) stage() error {
	p := *x.plan
	dir := filepath.Join(x.dir, StageDir)
	if err := os.RemoveAll(dir); err != nil { // a resumed run stages afresh
		return err
	}
	roots := slices.DeleteFunc(append([]string{x.fullsendRoot()}, p.harnessLayers()...), func(s string) bool { return s == "" })
	if p.AgentFile != "" && !isCached(p.AgentFile, p.CacheDir) {
		dst := filepath.Join(dir, "agent", filepath.Base(p.AgentFile))
		if err := stageFile(roots, p.AgentFile, dst); err != nil {
			return fmt.Errorf("agent %s: %w", p.AgentFile, err)
		}
		p.AgentFile = dst
	}
	for _, l := range []struct {
		kind string
		list *[]SkillPlan
	}{{"skill", &p.Skills}, {"plugin", &p.Plugins}} {
		out := slices.Clone(*l.list)
		for i, sp := range out {
			over := l.kind == "skill" && p.hasOverrides(sp.HostDir)
			if (sp.Remote || isCached(sp.HostDir, p.CacheDir)) && !over {
				continue
			}
			dst := filepath.Join(dir, l.kind+"s", sp.Name)
			if err := stageTree(roots, sp.HostDir, dst); err != nil {
				return fmt.Errorf("%s %s (%s): %w", l.kind, sp.Name, sp.HostDir, err)
			}
			if over {
				// After the tree was verified: the staged copy is what
				// the host scan and the sandbox see.
				if err := p.applyOverrides(roots, sp.HostDir, dst); err != nil {
					return fmt.Errorf("%s %s: %w", l.kind, sp.Name, err)
				}
			}
			out[i].HostDir = dst
		}
		*l.list = out
	}
	x.plan = &p
	return nil
}

func (x *execution) fullsendRoot() string {
	if x.plan.Harness != nil {
		return x.plan.Harness.Root
	}
	return ""
}

func (p *Plan) harnessLayers() []string {
	if p.Harness != nil {
		return p.Harness.Layers
	}
	return nil
}

func isCached(p, cacheDir string) bool {
	return cacheDir != "" && (p == cacheDir || strings.HasPrefix(p, cacheDir+string(filepath.Separator)))
}

// openRootFor opens the os.Root that contains host path p: the first of
// roots (the fullsend dir and its layers) that holds it, and rel, p's path
// inside it. A path outside all of them (an absolute reference the harness
// author chose) is opened at its own parent directory.
func openRootFor(roots []string, p string) (*os.Root, string, error) {
	for _, r := range roots {
		if rel, err := filepath.Rel(r, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			rt, err := os.OpenRoot(r)
			return rt, rel, err
		}
	}
	rt, err := os.OpenRoot(filepath.Dir(p))
	return rt, filepath.Base(p), err
}

func stageFile(roots []string, src, dst string) error {
	rt, rel, err := openRootFor(roots, src)
	if err != nil {
		return err
	}
	defer rt.Close()
	return copyFromRoot(rt, rel, dst)
}

// stageTree copies every regular file below src (symlinks that stay inside
// the directory are read as their targets; one leading out fails).
func stageTree(roots []string, src, dst string) error {
	rt, rel, err := openRootFor(roots, src)
	if err != nil {
		return err
	}
	sub, err := rt.OpenRoot(rel)
	rt.Close()
	if err != nil {
		return err
	}
	defer sub.Close()
	return fs.WalkDir(sub.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
			return nil // devices, FIFOs, sockets: never read
		}
		return copyFromRoot(sub, filepath.FromSlash(name), filepath.Join(dst, filepath.FromSlash(name)))
	})
}

func copyFromRoot(rt *os.Root, rel, dst string) error {
	f, err := rt.Open(rel)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		if st.IsDir() {
			return nil
		}
		return fmt.Errorf("%s: not a regular file", rel)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, st.Mode().Perm()&0o755|0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(out, io.LimitReader(f, maxStagedFile+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > maxStagedFile {
		err = errors.New("larger than 10 MiB")
	}
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	return nil
}
