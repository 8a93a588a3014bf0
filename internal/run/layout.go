package run

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// maxContextFile bounds every context file, agent definition and host file
// the runner reads or expands.
const maxContextFile = 4 << 20

// defaultAgentsMD is the org default AGENTS.md used when the fullsend dir
// has none (seed 002 "AGENTS.md injection logic", case 1).
//
//go:embed default_agents.md
var defaultAgentsMD []byte

// bridgeClaudeMD is the CLAUDE.md injected for the claude runtime when the
// repository has AGENTS.md but no CLAUDE.md (case 2): Claude Code reads
// CLAUDE.md only, and "@AGENTS.md" imports the file.
const bridgeClaudeMD = `# CLAUDE.md (added by fullsend for this run; not part of the repository)

This repository keeps its instructions for coding agents in AGENTS.md:

@AGENTS.md
`

// readBounded reads a host file whole, failing when it holds more than max
// bytes.
func readBounded(file string, max int64) ([]byte, error) {
	return limit.ReadFile(os.Open, file, max)
}

// contextFile is one file the host scan looks at.
type contextFile struct {
	host    string // host path
	display string // path shown in findings
	kind    string // context | agent | skill | plugin
	remote  bool
	// data is the content of a target repository file, read when it was
	// listed (without following any symlink); loaded says it is set.
	data   []byte
	loaded bool
}

// read returns the file's content: a target repository file's as read
// when it was listed, never read again by name; runtime content (agent,
// skills, plugins) from its host path.
func (f contextFile) read() ([]byte, error) {
	if f.loaded {
		return f.data, nil
	}
	return readBounded(f.host, maxContextFile)
}

// errRepoSymlink: a path inside the target repository that is a symlink
// (or has one among its components). Such paths are never followed: the
// sandbox copy leaves symlinks out, and the host reads only what the copy
// holds.
var errRepoSymlink = errors.New("is a symlink")

// repoFS reads the target repository on the host. Every access goes
// through an os.Root opened on the repository and never follows a
// symlink: each path component is looked at with Lstat inside the root,
// opened, and compared with what Lstat saw (os.SameFile), so a component
// swapped for a symlink in between is detected, not followed (and the
// os.Root confines even that window to the repository). The runner never
// writes into the host repository.
type repoFS struct {
	dir  string // host path of the repository
	root *os.Root
}

func openRepo(dir string) (*repoFS, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("target repository %s: %w", dir, err)
	}
	return &repoFS{dir: dir, root: r}, nil
}

func (r *repoFS) Close() error { return r.root.Close() }

// host is the host path of rel (slash-separated) for messages.
func (r *repoFS) host(rel string) string { return filepath.Join(r.dir, filepath.FromSlash(rel)) }

// lstat describes rel without following a symlink anywhere on its path;
// a symlinked directory on the way is errRepoSymlink.
func (r *repoFS) lstat(rel string) (fs.FileInfo, error) {
	parent, name, err := r.parent(rel)
	if err != nil {
		return nil, err
	}
	defer r.release(parent)
	fi, err := parent.Lstat(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.host(rel), unwrapPath(err))
	}
	return fi, nil
}

// readFile reads the regular file rel (at most max bytes), following no
// symlink: one at rel or on its path is errRepoSymlink.
func (r *repoFS) readFile(rel string, max int64) ([]byte, error) {
	parent, name, err := r.parent(rel)
	if err != nil {
		return nil, err
	}
	defer r.release(parent)
	return r.readIn(parent, name, rel, max)
}

// readIn reads the regular file name of the directory d (rel is its path
// in the repository, for messages).
func (r *repoFS) readIn(d *os.Root, name, rel string, max int64) ([]byte, error) {
	fi, err := d.Lstat(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.host(rel), unwrapPath(err))
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s %w", r.host(rel), errRepoSymlink)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", r.host(rel), errNotRegular)
	}
	f, err := d.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.host(rel), unwrapPath(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !os.SameFile(fi, st) {
		return nil, fmt.Errorf("%s: replaced while being opened", r.host(rel))
	}
	data, err := limit.ReadAll(f, max)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.host(rel), err)
	}
	return data, nil
}

// parent opens the directory holding rel, component by component (see
// subdir), and returns it with rel's last element.
func (r *repoFS) parent(rel string) (*os.Root, string, error) {
	parts := strings.Split(path.Clean(filepath.ToSlash(rel)), "/")
	d := r.root
	for i, c := range parts[:len(parts)-1] {
		sub, err := r.subdir(d, c, path.Join(parts[:i+1]...))
		r.release(d)
		if err != nil {
			return nil, "", err
		}
		d = sub
	}
	return d, parts[len(parts)-1], nil
}

// subdir opens the directory name of d without following a symlink.
func (r *repoFS) subdir(d *os.Root, name, rel string) (*os.Root, error) {
	fi, err := d.Lstat(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.host(rel), unwrapPath(err))
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s %w", r.host(rel), errRepoSymlink)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w", r.host(rel), syscall.ENOTDIR)
	}
	sub, err := d.OpenRoot(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.host(rel), unwrapPath(err))
	}
	if st, err := sub.Stat("."); err != nil || !os.SameFile(fi, st) {
		sub.Close()
		return nil, fmt.Errorf("%s: replaced while being opened", r.host(rel))
	}
	return sub, nil
}

func (r *repoFS) release(d *os.Root) {
	if d != r.root {
		d.Close()
	}
}

// walk calls fn for every regular file below the directory rel, in name
// order, with the directory holding it. Symlinks and special files are
// skipped (the copy leaves them out); a symlink at rel or on its path is
// errRepoSymlink.
func (r *repoFS) walk(rel string, fn func(rel string, d *os.Root, name string) error) error {
	d := r.root
	if rel != "." {
		parent, name, err := r.parent(rel)
		if err != nil {
			return err
		}
		d, err = r.subdir(parent, name, rel)
		r.release(parent)
		if err != nil {
			return err
		}
	}
	defer r.release(d)
	return r.walkIn(d, rel, fn)
}

func (r *repoFS) walkIn(d *os.Root, rel string, fn func(rel string, d *os.Root, name string) error) error {
	f, err := d.Open(".")
	if err != nil {
		return fmt.Errorf("%s: %w", r.host(rel), unwrapPath(err))
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", r.host(rel), unwrapPath(err))
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		erel := path.Join(rel, e.Name())
		switch {
		case e.Type().IsRegular():
			if err := fn(erel, d, e.Name()); err != nil {
				return err
			}
		case e.IsDir():
			sub, err := r.subdir(d, e.Name(), erel)
			if err != nil {
				return err
			}
			err = r.walkIn(sub, erel, fn)
			sub.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// unwrapPath drops the *PathError around err (the callers name the host
// path themselves).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// errNotRegular: a repository path that is not a regular file (left out
// of the copy, or a directory).
var errNotRegular = errors.New("not a regular file")

// isRepoSymlink reports whether err is a symlink met in the repository.
func isRepoSymlink(err error) bool { return errors.Is(err, errRepoSymlink) }

// repoContextFiles lists the target repository's context files with their
// content: CLAUDE.md, CLAUDE.local.md and AGENTS.md at its root,
// .claude/CLAUDE.md, .claude/skills/**/SKILL.md and every file under
// .claude/rules, .claude/commands, .claude/agents and .claude/output-styles
// (what Claude Code loads as instructions).
// They are read here, once, through repoFS: a symlink (at the file or on
// its path) is never followed and the file is left out, exactly as the
// sandbox copy leaves it out.
func repoContextFiles(repo string) ([]contextFile, error) {
	if repo == "" {
		return nil, nil
	}
	r, err := openRepo(repo)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []contextFile
	add := func(rel string, data []byte) {
		out = append(out, contextFile{host: r.host(rel), display: rel, kind: "context", data: data, loaded: true})
	}
	for _, n := range []string{"CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", ".claude/CLAUDE.md"} {
		fi, err := r.lstat(n)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || isRepoSymlink(err) {
				continue // absent, or .claude is no directory in the copy
			}
			return nil, fmt.Errorf("target repository: %w", err)
		}
		if !fi.Mode().IsRegular() {
			continue // a symlink or special file is not in the copy
		}
		data, err := r.readFile(n, maxContextFile)
		if err != nil {
			return nil, fmt.Errorf("target repository: %w", err)
		}
		add(n, data)
	}
	for _, dir := range []string{".claude/skills", ".claude/rules", ".claude/commands", ".claude/agents", ".claude/output-styles"} {
		if !r.isDir(dir) {
			continue
		}
		err = r.walk(dir, func(rel string, d *os.Root, name string) error {
			if dir == ".claude/skills" && name != "SKILL.md" {
				return nil
			}
			data, err := r.readIn(d, name, rel, maxContextFile)
			if err != nil {
				return err
			}
			add(rel, data)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("target repository: %w", err)
		}
	}
	return out, nil
}

// repoImports follows the @imports of the repository's context files
// (scan.FollowImports, the resolver `fullsend scan context` uses too) as
// Claude Code will see them in the sandbox copy at sandboxRoot: the files
// reached are read through repoFS (a symlink, a missing file or anything
// but a regular file is not in the copy: skipped), and every import that
// leaves the repository is a finding.
func repoImports(repo, sandboxRoot string, files []contextFile) ([]contextFile, []scan.Finding, error) {
	if repo == "" {
		return nil, nil, nil
	}
	r, err := openRepo(repo)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var in []scan.ImportFile
	for _, f := range files {
		if f.loaded {
			in = append(in, scan.ImportFile{Rel: f.display, Data: f.data})
		}
	}
	read := func(rel string) ([]byte, error) {
		data, err := r.readFile(rel, maxContextFile)
		if err != nil && (isRepoSymlink(err) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, errNotRegular)) {
			return nil, fmt.Errorf("%w: %w", fs.ErrNotExist, err)
		}
		return data, err
	}
	got, findings, err := scan.FollowImports(sandboxRoot, in, read)
	if err != nil {
		return nil, nil, fmt.Errorf("target repository: %w", err)
	}
	var out []contextFile
	for _, g := range got {
		out = append(out, contextFile{host: r.host(g.Rel), display: g.Rel, kind: "context", data: g.Data, loaded: true})
	}
	return out, findings, nil
}

// isDir reports whether rel is a directory reached without a symlink.
func (r *repoFS) isDir(rel string) bool {
	fi, err := r.lstat(rel)
	return err == nil && fi.IsDir()
}

// repoSkillNames lists the names of the repository's project-level skills
// (directories under .claude/skills holding SKILL.md as a regular file),
// through repoFS: nothing reached through a symlink counts.
func repoSkillNames(repo string) []string {
	if repo == "" {
		return nil
	}
	r, err := openRepo(repo)
	if err != nil {
		return nil
	}
	defer r.Close()
	if !r.isDir(".claude/skills") {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	_ = r.walk(".claude/skills", func(rel string, _ *os.Root, name string) error {
		parts := strings.Split(rel, "/")
		if name == "SKILL.md" && len(parts) == 4 && !seen[parts[2]] {
			seen[parts[2]] = true
			out = append(out, parts[2])
		}
		return nil
	})
	return out
}

// runtimeContentFiles lists what the runtime uploads into the config dir:
// the agent definition, every file of every skill and plugin.
func (p *Plan) runtimeContentFiles() ([]contextFile, error) {
	out := []contextFile{{host: p.AgentFile, display: "agents/" + p.AgentName + ".md", kind: "agent"}}
	add := func(kind string, sp SkillPlan) error {
		return filepath.WalkDir(sp.HostDir, func(f string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			rel, _ := filepath.Rel(sp.HostDir, f)
			out = append(out, contextFile{host: f, display: kind + "s/" + sp.Name + "/" + filepath.ToSlash(rel), kind: kind, remote: sp.Remote})
			return nil
		})
	}
	for _, s := range p.Skills {
		if err := add("skill", s); err != nil {
			return nil, fmt.Errorf("skill %s: %w", s.Name, err)
		}
	}
	for _, pl := range p.Plugins {
		if err := add("plugin", pl); err != nil {
			return nil, fmt.Errorf("plugin %s: %w", pl.Name, err)
		}
	}
	return out, nil
}

// injection decides the AGENTS.md / CLAUDE.md injection of seed 002, read
// as a sequence: (1) no AGENTS.md → inject the org default; (2) the runtime
// is Claude Code and the repository (now) has AGENTS.md but no CLAUDE.md →
// inject the bridge; (3) both present → nothing.
type injection struct {
	agentsMD []byte // nil = none
	claudeMD []byte // nil = none
	notes    []string
}

// decideInjection looks at the repository as its sandbox copy will be: a
// context file counts only as a regular file. One that is a symlink is
// left out of the copy, so it is absent (never followed, wherever it
// points; a note says so) and the org default or the bridge takes its
// place — a symlink cannot suppress the injection.
func (p *Plan) decideInjection(orgAgents []byte) injection {
	var inj injection
	var r *repoFS
	if p.TargetRepo != "" {
		if rr, err := openRepo(p.TargetRepo); err == nil {
			r = rr
			defer r.Close()
		}
	}
	has := func(n string) bool {
		if r == nil {
			return false
		}
		fi, err := r.lstat(n)
		if err != nil {
			return false
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			inj.notes = append(inj.notes, fmt.Sprintf("target repository %s is a symlink: left out of the copy and treated as absent (not followed)", n))
		}
		return fi.Mode().IsRegular()
	}
	hasAgents, hasClaude := has("AGENTS.md"), has("CLAUDE.md")
	if !hasAgents {
		inj.agentsMD = orgAgents
		hasAgents = true
	}
	if p.Runtime == "claude" && hasAgents && !hasClaude {
		inj.claudeMD = []byte(bridgeClaudeMD)
	}
	return inj
}

// orgAgentsMD is the org default AGENTS.md content.
func (p *Plan) orgAgentsMD() ([]byte, error) {
	if p.OrgAgentsMD == "" {
		return defaultAgentsMD, nil
	}
	b, err := readBounded(p.OrgAgentsMD, maxContextFile)
	if err != nil {
		return nil, fmt.Errorf("org AGENTS.md: %w", err)
	}
	return b, nil
}

// envFile renders /sandbox/workspace/.env: one "export NAME='value'" line
// per variable, sorted.
func envFile(env map[string]string) []byte {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# written by fullsend: env.sandbox of the harness\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "export %s=%s\n", k, shellQuote(env[k]))
	}
	return []byte(b.String())
}

// layout stages and uploads /sandbox/workspace (see doc.go "Workspace
// layout"). It returns the files injected into the repository copy.
func (x *execution) layout(ctx context.Context) error {
	p, s := x.plan, x.sess
	stage, err := os.MkdirTemp("", "fullsend-stage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	elsewhere, err := x.uploadWorkspace(ctx, stage)
	if err != nil {
		return err
	}
	out := filepath.Join(stage, "output")
	if err := os.Mkdir(out, 0o755); err != nil {
		return err
	}
	if err := s.Upload(ctx, out, OutputDir); err != nil {
		return fmt.Errorf("upload %s: %w", OutputDir, err)
	}

	// The target repository (or an empty working directory).
	repoDir := p.RepoDir()
	if p.TargetRepo == "" {
		if err := s.Upload(ctx, out, repoDir); err != nil {
			return fmt.Errorf("create %s: %w", repoDir, err)
		}
	} else if err := uploadTree(ctx, s, p.TargetRepo, repoDir, p.ExcludeFromRepo); err != nil {
		return fmt.Errorf("copy target repository %s: %w", p.TargetRepo, err)
	}
	if err := x.inject(ctx, stage, repoDir); err != nil {
		return err
	}
	if err := x.uploadAgentInput(ctx, repoDir); err != nil {
		return err
	}

	// Host files outside the workspace (and inside the repository copy).
	for _, hf := range elsewhere {
		hp := filepath.Join(stage, "hostfiles", fmt.Sprint(hf.Index), filepath.Base(hf.Dest))
		if err := stageHostFile(hf, hp, x.getenv); err != nil {
			return err
		}
		if err := s.Upload(ctx, hp, hf.Dest); err != nil {
			return fmt.Errorf("host_files[%d]: upload to %s: %w", hf.Index, hf.Dest, err)
		}
	}
	if p.ReadonlyRepo {
		res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"chmod", "-R", "a-w", "--", repoDir}})
		if err != nil || res.ExitCode != 0 {
			return fmt.Errorf("readonly_repo: chmod %s failed: %v %s", repoDir, err, strings.TrimSpace(string(res.Stderr)))
		}
	}
	return nil
}

// uploadWorkspace stages <stage>/workspace (.env, .env.d/, the host files
// under /sandbox/workspace outside the repository copy) and uploads it. It
// returns the other host files, uploaded one by one after the repository.
func (x *execution) uploadWorkspace(ctx context.Context, stage string) ([]HostFile, error) {
	p := x.plan
	ws := filepath.Join(stage, "workspace")
	if err := os.MkdirAll(filepath.Join(ws, ".env.d"), 0o700); err != nil {
		return nil, err
	}
	env := map[string]string{}
	for k, v := range p.SandboxEnv {
		env[k] = v
	}
	env["FULLSEND_OUTPUT_DIR"] = OutputDir
	if err := os.WriteFile(filepath.Join(ws, ".env"), envFile(env), 0o600); err != nil {
		return nil, err
	}
	var elsewhere []HostFile
	for _, hf := range p.HostFiles {
		if hf.Src == "" {
			continue
		}
		rel, ok := strings.CutPrefix(hf.Dest, runtime.WorkspaceDir+"/")
		if !ok {
			elsewhere = append(elsewhere, hf)
			continue
		}
		if rel == p.RepoName || strings.HasPrefix(rel, p.RepoName+"/") {
			elsewhere = append(elsewhere, hf) // after the repo copy
			continue
		}
		if err := stageHostFile(hf, filepath.Join(ws, filepath.FromSlash(rel)), x.getenv); err != nil {
			return nil, err
		}
	}
	if err := x.sess.Upload(ctx, ws, runtime.WorkspaceDir); err != nil {
		return nil, fmt.Errorf("upload workspace: %w", err)
	}
	return elsewhere, nil
}

// inject writes the AGENTS.md / CLAUDE.md the injection decision asks for
// into the repository copy at repoDir, and excludes them from git there.
func (x *execution) inject(ctx context.Context, stage, repoDir string) error {
	p := x.plan
	org, err := p.orgAgentsMD()
	if err != nil {
		return err
	}
	inj := p.decideInjection(org)
	for _, n := range inj.notes {
		x.note(n)
	}
	var excl []string
	for _, f := range []struct {
		name string
		data []byte
	}{{"AGENTS.md", inj.agentsMD}, {"CLAUDE.md", inj.claudeMD}} {
		if f.data == nil {
			continue
		}
		hp := filepath.Join(stage, f.name)
		if err := os.WriteFile(hp, f.data, 0o644); err != nil {
			return err
		}
		if err := x.sess.Upload(ctx, hp, path.Join(repoDir, f.name)); err != nil {
			return fmt.Errorf("inject %s: %w", f.name, err)
		}
		excl = append(excl, "/"+f.name)
		x.report.Target.Injected = append(x.report.Target.Injected, f.name)
	}
	if len(excl) > 0 && p.TargetRepo != "" {
		return x.excludeInjected(ctx, stage, repoDir, excl)
	}
	return nil
}

// excludeInjected appends the injected files (excl) to the copy's
// .git/info/exclude, after the host repository's own entries; without a
// .git directory a note says so.
func (x *execution) excludeInjected(ctx context.Context, stage, repoDir string, excl []string) error {
	r, err := openRepo(x.plan.TargetRepo)
	if err != nil {
		return err
	}
	prev, hasGit, note, err := gitExclude(r)
	r.Close()
	if err != nil {
		return err
	}
	if note != "" {
		x.note(note)
	}
	if !hasGit {
		x.note("injected " + strings.Join(x.report.Target.Injected, ", ") + " not added to .git/info/exclude: the repository has no .git directory")
		return nil
	}
	var b strings.Builder
	b.Write(prev)
	if len(prev) > 0 && prev[len(prev)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString("# added by fullsend (injected for this run)\n")
	for _, e := range excl {
		b.WriteString(e + "\n")
	}
	hp := filepath.Join(stage, "exclude")
	if err := os.WriteFile(hp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	if err := x.sess.Upload(ctx, hp, path.Join(repoDir, ".git", "info", "exclude")); err != nil {
		return fmt.Errorf("write .git/info/exclude: %w", err)
	}
	return nil
}

// gitExclude reads the repository's .git/info/exclude through repoFS, to
// append the injected files to it in the copy. hasGit is false when .git
// is not a directory (itself not followed when a symlink). A symlink at
// .git/info or .git/info/exclude is not followed: the copy holds no such
// file (symlinks are left out), so the copy's exclude gets fullsend's
// entries only, and note says so.
func gitExclude(r *repoFS) (prev []byte, hasGit bool, note string, err error) {
	fi, err := r.lstat(".git")
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, false, "target repository " + r.host(".git") + " is a symlink: not followed", nil
	}
	if err != nil || !fi.IsDir() {
		return nil, false, "", nil
	}
	prev, err = r.readFile(".git/info/exclude", maxContextFile)
	switch {
	case err == nil:
		return prev, true, "", nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, true, "", nil
	case isRepoSymlink(err):
		return nil, true, "target repository: " + err.Error() + ": not read (not followed); the copy's .git/info/exclude lists fullsend's entries only", nil
	}
	return nil, false, "", fmt.Errorf("target repository: %w", err)
}

// stageHostFile copies (expand: false) or expands (expand: true) a host
// file to dst with mode 0600.
func stageHostFile(hf HostFile, dst string, getenv func(string) string) error {
	data, err := readBounded(hf.Src, maxContextFile)
	if err != nil {
		return fmt.Errorf("host_files[%d]: %w", hf.Index, err)
	}
	if hf.Expand {
		s, _ := expandVars(string(data), getenv)
		data = []byte(s)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o600)
}

// uploadTree uploads src to dst, leaving out the host paths in exclude
// (each inside src): directories on the way to an excluded path are walked
// entry by entry, everything else is uploaded whole.
func uploadTree(ctx context.Context, s sandbox.Session, src, dst string, exclude []string) error {
	if len(exclude) == 0 {
		return s.Upload(ctx, src, dst)
	}
	for _, ex := range exclude {
		if filepath.Clean(ex) == filepath.Clean(src) {
			return nil
		}
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	var sub []string
	for _, ex := range exclude {
		if within(ex, src) {
			sub = append(sub, ex)
		}
	}
	if len(sub) == 0 {
		return s.Upload(ctx, src, dst)
	}
	empty := true
	for _, e := range ents {
		if !e.IsDir() && !e.Type().IsRegular() {
			continue // symlinks and special files: left out, as everywhere in the copy
		}
		hp := filepath.Join(src, e.Name())
		var inner []string
		skip := false
		for _, ex := range sub {
			if filepath.Clean(ex) == hp {
				skip = true
			} else if within(ex, hp) {
				inner = append(inner, ex)
			}
		}
		if skip {
			continue
		}
		empty = false
		if len(inner) > 0 && e.IsDir() {
			if err := uploadTree(ctx, s, hp, path.Join(dst, e.Name()), inner); err != nil {
				return err
			}
			continue
		}
		if err := s.Upload(ctx, hp, path.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	if empty {
		tmp, err := os.MkdirTemp("", "fullsend-empty-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		return s.Upload(ctx, tmp, dst)
	}
	return nil
}
