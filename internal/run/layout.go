package run

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
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

func readBounded(file string, max int64) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", file, max)
	}
	return data, nil
}

// contextFile is one file the host scan looks at.
type contextFile struct {
	host    string // host path
	display string // path shown in findings
	kind    string // context | agent | skill | plugin
	remote  bool
}

// repoContextFiles lists the target repository's context files: CLAUDE.md
// and AGENTS.md at its root and .claude/skills/**/SKILL.md. Symlinks are
// not followed (the copy does not follow them either).
func repoContextFiles(repo string) ([]contextFile, error) {
	if repo == "" {
		return nil, nil
	}
	var out []contextFile
	for _, n := range []string{"CLAUDE.md", "AGENTS.md"} {
		p := filepath.Join(repo, n)
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, contextFile{host: p, display: n, kind: "context"})
		}
	}
	skills := filepath.Join(repo, ".claude", "skills")
	err := filepath.WalkDir(skills, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == skills && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipDir
			}
			return err
		}
		if d.Type().IsRegular() && d.Name() == "SKILL.md" {
			rel, _ := filepath.Rel(repo, p)
			out = append(out, contextFile{host: p, display: filepath.ToSlash(rel), kind: "context"})
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("target repository %s: %w", repo, err)
	}
	return out, nil
}

// repoSkillNames lists the names of the repository's project-level skills
// (directories under .claude/skills holding SKILL.md).
func repoSkillNames(repo string) []string {
	if repo == "" {
		return nil
	}
	ents, err := os.ReadDir(filepath.Join(repo, ".claude", "skills"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(repo, ".claude", "skills", e.Name(), "SKILL.md")); err == nil {
				out = append(out, e.Name())
			}
		}
	}
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
}

func (p *Plan) decideInjection(orgAgents []byte) injection {
	var inj injection
	has := func(n string) bool {
		if p.TargetRepo == "" {
			return false
		}
		st, err := os.Lstat(filepath.Join(p.TargetRepo, n))
		return err == nil && !st.IsDir()
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
	ws := filepath.Join(stage, "workspace")
	if err := os.MkdirAll(filepath.Join(ws, ".env.d"), 0o700); err != nil {
		return err
	}
	env := map[string]string{}
	for k, v := range p.SandboxEnv {
		env[k] = v
	}
	env["FULLSEND_OUTPUT_DIR"] = OutputDir
	if err := os.WriteFile(filepath.Join(ws, ".env"), envFile(env), 0o600); err != nil {
		return err
	}
	// host_files: those under /sandbox/workspace are staged; others are
	// uploaded one by one after the workspace.
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
			return err
		}
	}
	if err := s.Upload(ctx, ws, runtime.WorkspaceDir); err != nil {
		return fmt.Errorf("upload workspace: %w", err)
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

	// AGENTS.md / CLAUDE.md injection, excluded from git.
	org, err := p.orgAgentsMD()
	if err != nil {
		return err
	}
	inj := p.decideInjection(org)
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
		if err := s.Upload(ctx, hp, path.Join(repoDir, f.name)); err != nil {
			return fmt.Errorf("inject %s: %w", f.name, err)
		}
		excl = append(excl, "/"+f.name)
		x.report.Target.Injected = append(x.report.Target.Injected, f.name)
	}
	if len(excl) > 0 && p.TargetRepo != "" {
		gitDir := filepath.Join(p.TargetRepo, ".git")
		if st, err := os.Lstat(gitDir); err == nil && st.IsDir() {
			prev, _ := readBounded(filepath.Join(gitDir, "info", "exclude"), maxContextFile)
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
			if err := s.Upload(ctx, hp, path.Join(repoDir, ".git", "info", "exclude")); err != nil {
				return fmt.Errorf("write .git/info/exclude: %w", err)
			}
		} else {
			x.note("injected " + strings.Join(x.report.Target.Injected, ", ") + " not added to .git/info/exclude: the repository has no .git directory")
		}
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
