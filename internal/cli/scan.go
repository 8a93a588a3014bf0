package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/scan"
	"github.com/fullsend-ai/fullsend/internal/termsafe"
)

// maxScanFile bounds the size of one scanned file; larger files are
// reported (critical in closed mode), not silently skipped.
const maxScanFile = 64 << 20

// textExt lists extensions that are always scanned as text, even when they
// contain NUL bytes (a NUL must not be a way to dodge the scan).
var textExt = map[string]bool{
	".md": true, ".markdown": true, ".txt": true, ".yaml": true, ".yml": true, ".json": true, ".toml": true,
	".sh": true, ".bash": true, ".py": true, ".js": true, ".ts": true, ".env": true, ".cfg": true, ".ini": true,
}

type scanFlags struct {
	json     bool
	remote   bool
	failMode string
	accept   string
}

func (f *scanFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.json, "json", false, `print {"findings": [...], "notices": [...], "blocked": bool} on stdout`)
	fl.BoolVar(&f.remote, "remote", false, "scan as remote content (context-injection scan mandatory, ML threshold 0.95)")
	fl.StringVar(&f.failMode, "fail-mode", "", "`closed` (critical findings exit 1) or open (report and exit 0); default: config, else closed")
	fl.StringVar(&f.accept, "accept", "", "the acceptance `FILE` of reviewed findings (default: <fullsend-dir>/"+scan.AcceptFile+" when present)")
}

// acceptances loads the acceptance file named by --accept (which must
// exist), else <fullsend-dir>/scan-accept.yaml when present and the
// fullsend dir is not a repository layer (package trust).
func (f *scanFlags) acceptances(env *Env) (*scan.Acceptances, error) {
	if f.accept == "" {
		return env.acceptances(env.FullsendDir)
	}
	if _, err := os.Stat(f.accept); err != nil {
		return nil, fmt.Errorf("--accept: %w", err)
	}
	return scan.LoadAcceptances(f.accept)
}

func newScanCmd(env *Env) *cobra.Command {
	var f scanFlags
	cmd := &cobra.Command{
		Use:   "scan [--json] [--remote] [--fail-mode closed|open] PATH...",
		Short: "Scan files for prompt injection, hidden Unicode, secrets and internal URLs",
		Long: `Scan files (directories recursively, .git skipped) with the security
scanners fullsend applies to every agent, skill, policy and context file:
hidden Unicode (bidi controls, zero-width and tag characters, look-alike
letters), context injection (also hidden in comments, base64, invisible or
look-alike characters), secrets (gitleaks rules), URLs to metadata endpoints
and internal addresses, and the optional LLM Guard ML check.

Policy comes from <fullsend-dir>/config.yaml when present (security.fail_mode,
security.scan, security.llm_guard, allowed_private_networks); --fail-mode
overrides the fail mode. Binary files (a NUL byte, other than in text
extensions such as .md) are skipped with a notice. Findings are also
appended to <cache>/findings.jsonl.

A reviewed finding can be accepted in <fullsend-dir>/scan-accept.yaml
(--accept FILE for another file): an entry names the rule, the sha256 of the
file's exact bytes (printed with each critical finding, and in --json), the
reason and who accepted it. An accepted finding is still reported, with its
severity and "accepted", but does not block; a changed file is judged afresh.

Exit status: 1 when a critical finding that is not accepted exists in fail
mode closed; 0 in fail mode open (findings are printed as warnings); 2 on bad
usage.
A file literally named "context" must be given as ./context.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFailModeFlag(f.failMode); err != nil {
				return err
			}
			cfg, err := env.LoadConfig()
			if err != nil {
				return err
			}
			o := scan.OptionsFromConfig(cfg, nil)
			o.Getenv = env.Getenv
			if o.Accept, err = f.acceptances(env); err != nil {
				return err
			}
			cacheDir := cas.DefaultDir(env.Workspace, env.Getenv)
			o.FindingsLog = scan.FindingsPath(cacheDir)
			err = runScan(cmd, env, f, o, args, nil)
			// The findings log may have created the cache directory.
			if ierr := ignoreIfPresent(cacheDir); ierr != nil {
				fmt.Fprintf(env.Stderr, "fullsend: warning: cache %s\n", oneLine(ierr.Error()))
			}
			return err
		},
	}
	f.add(cmd)
	env.addTrustWorktreeFlag(cmd)
	cmd.AddCommand(newScanContextCmd(env))
	return cmd
}

func newScanContextCmd(env *Env) *cobra.Command {
	var f scanFlags
	var configDir string
	cmd := &cobra.Command{
		Use:   "context [--json] [--remote] [--fail-mode closed|open] [--config-dir DIR] [DIR]",
		Short: "Scan the assembled sandbox context (CLAUDE.md, AGENTS.md, skills, agents)",
		Long: `Scan the context an agent will load, as assembled in the sandbox. Works
offline and without any configuration (default policy: fail mode closed,
context-injection scan on, no ML layer).

Files scanned:
  under DIR (the repository the agent works in; default: the current
  directory), .git skipped:
    every CLAUDE.md, CLAUDE.local.md and AGENTS.md at any depth
    .claude/CLAUDE.md
    every file under .claude/skills/ (SKILL.md and the resources beside it)
    every file under .claude/agents/, .claude/commands/, .claude/rules/
    and .claude/output-styles/
    every file these import with @path, as Claude Code follows imports
    (up to 5 hops; an import that leaves DIR is a critical finding)
  under the config dir (--config-dir, default $CLAUDE_CONFIG_DIR; e.g.
  /sandbox/claude-config), when set:
    CLAUDE.md, every file under agents/ and skills/

Reviewed findings are accepted as for 'fullsend scan' (--accept FILE, default
<fullsend-dir>/scan-accept.yaml when present); fullsend run passes its own.

Exit status: 1 when a critical finding that is not accepted exists in fail
mode closed, else 0.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFailModeFlag(f.failMode); err != nil {
				return err
			}
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if configDir == "" {
				configDir = env.Getenv("CLAUDE_CONFIG_DIR")
			}
			files, err := contextFiles(dir, configDir)
			if err != nil {
				return err
			}
			imported, refused, err := contextImports(dir, files)
			if err != nil {
				return err
			}
			files = append(files, imported...)
			var notices []string
			if len(files) == 0 {
				notices = append(notices, fmt.Sprintf("no context files found under %s", dir))
			}
			o := scan.DefaultOptions()
			if o.Accept, err = f.acceptances(env); err != nil {
				return err
			}
			return runScan(cmd, env, f, o, files, notices, refused...)
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&configDir, "config-dir", "", "the runtime config `DIR` holding agents/ and skills/ (default $CLAUDE_CONFIG_DIR)")
	return cmd
}

func checkFailModeFlag(m string) error {
	switch m {
	case "", scan.FailClosed, scan.FailOpen:
		return nil
	}
	return usageError{fmt.Errorf("--fail-mode %q: want closed or open", m)}
}

// contextFiles lists the context files of a workspace directory and of an
// optional runtime config directory (see the context command's help).
func contextFiles(dir, configDir string) ([]string, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("scan context %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("scan context %s: not a directory", dir)
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	names := map[string]bool{"CLAUDE.md": true, "CLAUDE.local.md": true, "AGENTS.md": true}
	err = walkFiles(dir, func(p string, d fs.DirEntry) error {
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case names[d.Name()], rel == ".claude/CLAUDE.md",
			strings.HasPrefix(rel, ".claude/skills/"), strings.HasPrefix(rel, ".claude/agents/"), strings.HasPrefix(rel, ".claude/commands/"),
			strings.HasPrefix(rel, ".claude/rules/"), strings.HasPrefix(rel, ".claude/output-styles/"):
			add(p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan context %s: %w", dir, err)
	}
	if configDir != "" {
		if _, err := os.Stat(configDir); err != nil {
			return nil, fmt.Errorf("scan context: config dir %s: %w", configDir, err)
		}
		if _, err := os.Lstat(filepath.Join(configDir, "CLAUDE.md")); err == nil {
			add(filepath.Join(configDir, "CLAUDE.md"))
		}
		for _, sub := range []string{"agents", "skills"} {
			root := filepath.Join(configDir, sub)
			if _, err := os.Stat(root); err != nil {
				continue
			}
			err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !d.IsDir() {
					add(p)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("scan context %s: %w", root, err)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// scanJSON is the --json output.
type scanJSON struct {
	Findings []scan.Finding `json:"findings"`
	Notices  []string       `json:"notices"`
	Blocked  bool           `json:"blocked"`
}

// runScan scans args; pre are findings made before (refused imports),
// judged like the scanners' (acceptances, fail mode).
func runScan(cmd *cobra.Command, env *Env, f scanFlags, o scan.Options, args []string, notices []string, pre ...importFindings) error {
	if f.failMode != "" {
		o.FailMode = f.failMode
	}
	p, err := scan.New(o)
	if err != nil {
		return err
	}
	origin := scan.Local
	if f.remote {
		origin = scan.Remote
	}
	total := scanJSON{Findings: []scan.Finding{}, Notices: []string{}}
	seenNotice := map[string]bool{}
	note := func(s string) {
		if !seenNotice[s] {
			seenNotice[s] = true
			total.Notices = append(total.Notices, s)
		}
	}
	for _, n := range notices {
		note(n)
	}
	for _, fi := range pre {
		r, err := p.Judge(fi.data, scan.Meta{Path: fi.path, Origin: origin, Kind: "context"}, fi.findings)
		if err != nil {
			return err
		}
		total.Findings = append(total.Findings, r.Findings...)
		total.Blocked = total.Blocked || r.Blocked
	}
	files := 0
	ctx := cmd.Context()
	var all []string // every path scanned
	for _, arg := range args {
		paths, err := expandScanPath(arg)
		if err != nil {
			return err
		}
		for _, path := range paths {
			r, skip, err := scanFile(ctx, p, path, scan.Meta{Path: path, Origin: origin, Kind: "other"})
			if err != nil {
				return err
			}
			if skip != "" {
				note(skip)
				continue
			}
			files++
			total.Findings = append(total.Findings, r.Findings...)
			total.Blocked = total.Blocked || r.Blocked
			for _, n := range r.Notices {
				note(n)
			}
		}
		all = append(all, paths...)
	}
	// Skill directories judged as one unit (scan_skillunit.go).
	r, err := scanSkillUnits(ctx, p, all, total.Findings, origin)
	if err != nil {
		return err
	}
	total.Findings = append(total.Findings, r.Findings...)
	total.Blocked = total.Blocked || r.Blocked
	if f.json {
		if err := writeJSON(env.Stdout, total); err != nil {
			return err
		}
	} else {
		for _, n := range total.Notices {
			env.notef("%s", n)
		}
		printFindings(env.Stdout, total.Findings, files, p.FailMode(), total.Blocked)
	}
	if total.Blocked {
		n := 0
		for _, fd := range total.Findings {
			if fd.Blocks() {
				n++
			}
		}
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("scan: %d critical finding(s); blocked (fail mode closed)", n)}
	}
	return nil
}

// expandScanPath lists the regular files of a path: itself, or the files of
// a directory tree in lexical order, .git directories skipped. Symlinks to
// files are followed; symlinked directories are not entered.
func expandScanPath(arg string) ([]string, error) {
	fi, err := os.Stat(arg)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", arg, err)
	}
	if !fi.IsDir() {
		return []string{arg}, nil
	}
	var out []string
	err = walkFiles(arg, func(p string, d fs.DirEntry) error {
		if d.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(p); err != nil || st.IsDir() {
				return nil
			}
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", arg, err)
	}
	return out, nil
}

// walkFiles calls fn for each entry below root that is not a directory,
// in lexical order; .git directories are not entered.
func walkFiles(root string, fn func(p string, d fs.DirEntry) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		return fn(p, d)
	})
}

// scanFile scans one file. skip is a notice when the file is not scanned
// (binary, or not a regular file). The file is not read into memory whole:
// the pipeline reads large files chunk by chunk.
func scanFile(ctx context.Context, p *scan.Pipeline, path string, m scan.Meta) (r *scan.Result, skip string, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, "", fmt.Errorf("scan %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Sprintf("%s: not a regular file, skipped", path), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("scan %s: %w", path, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, "", fmt.Errorf("scan %s: %w", path, err)
	}
	size := fi.Size()
	if size > maxScanFile {
		return nil, "", fmt.Errorf("scan %s: larger than %d bytes", path, maxScanFile)
	}
	head := make([]byte, min(size, 8000))
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), head); err != nil {
		return nil, "", fmt.Errorf("scan %s: %w", path, err)
	}
	if bytes.IndexByte(head, 0) >= 0 && !textExt[strings.ToLower(filepath.Ext(path))] {
		return nil, fmt.Sprintf("%s: binary file skipped", path), nil
	}
	if r, err = p.ScanReaderAt(ctx, f, size, m); err != nil {
		return nil, "", fmt.Errorf("scan %s: %w", path, err)
	}
	return r, "", nil
}

// printFindings writes the human report: findings grouped by file with
// line:column, severity, rule, message and excerpt, then a summary line.
func printFindings(w io.Writer, fs []scan.Finding, files int, failMode string, blocked bool) {
	// Paths, messages and excerpts come from the scanned content:
	// termsafe.Fprintf sanitizes them.
	byPath := map[string][]scan.Finding{}
	var paths []string
	var crit, warn, info, accepted int
	for _, f := range fs {
		if f.Accepted != nil {
			accepted++
		}
		if _, ok := byPath[f.Path]; !ok {
			paths = append(paths, f.Path)
		}
		byPath[f.Path] = append(byPath[f.Path], f)
		switch f.Severity {
		case scan.Critical:
			crit++
		case scan.Warning:
			warn++
		default:
			info++
		}
	}
	for _, p := range paths {
		termsafe.Fprintf(w, "%s\n", p)
		for _, f := range byPath[p] {
			sev := f.Severity.String()
			switch {
			case f.Accepted != nil:
				sev += fmt.Sprintf(" (accepted by %s: %s)", f.Accepted.Who, f.Accepted.Reason)
			case f.Severity == scan.Critical && failMode == scan.FailOpen:
				sev = "critical (fail mode open: not blocking)"
			}
			termsafe.Fprintf(w, "  %d:%d\t%s\t%s\t%s\n", f.Line, f.Column, sev, f.Rule, f.Message)
			if f.Excerpt != "" {
				termsafe.Fprintf(w, "  \t| %s\n", f.Excerpt)
			}
			if f.Blocks() && f.SHA256 != "" {
				termsafe.Fprintf(w, "  \t  to accept after review: rule %s, sha256 %s (%s)\n", f.Rule, f.SHA256, scan.AcceptFile)
			}
		}
	}
	verdict := "ok"
	switch {
	case blocked:
		verdict = "blocked (fail mode closed)"
	case crit > 0 && failMode == scan.FailOpen:
		verdict = "not blocked (fail mode open)"
	case crit > 0:
		verdict = "ok (critical findings accepted)"
	}
	acc := ""
	if accepted > 0 {
		acc = fmt.Sprintf(", %d accepted", accepted)
	}
	termsafe.Fprintf(w, "%d file(s) scanned: %d critical, %d warning(s), %d info%s; %s\n", files, crit, warn, info, acc, verdict)
}
