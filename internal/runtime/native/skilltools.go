package native

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

func runReadSkillResource(ctx context.Context, l *loop, n int, args map[string]any) toolResult {
	a := toolArgs{m: args}
	name, rel := a.str("skill", true), a.str("path", true)
	if a.err != nil {
		return errorf("%v", a.err)
	}
	s := l.skills.get(name)
	if s == nil {
		return errorf("no skill %q; available skills: %s", name, strings.Join(l.skills.names(), ", "))
	}
	if err := checkResourcePath(rel); err != nil {
		return errorf("read_skill_resource %s: %v", name, err)
	}
	var (
		data []byte
		err  error
	)
	if s.Source == "harness" {
		data, err = readHostSkillFile(s, rel)
	} else {
		data, err = l.readSandboxFile(ctx, path.Join(s.SandboxDir, rel), MaxSkillFileBytes)
	}
	if err != nil {
		return errorf("read_skill_resource: %v", err)
	}
	rec := SkillRead{Skill: name, Source: s.Source, Path: rel, SHA256: sha256Hex(data), Size: len(data)}
	out := toolResult{text: string(data)}
	if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		out = errorf("read_skill_resource %s/%s: not a text file (%d bytes); it is at %s in the sandbox", name, rel, len(data), path.Join(s.SandboxDir, rel))
		rec.Error = "not a text file"
	}
	if err := l.recordSkillRead(n, rec); err != nil {
		return errorf("read_skill_resource %s/%s: recording the read in %s: %v", name, rel, SkillReadsFile, err)
	}
	return out
}

func runSkillScript(ctx context.Context, l *loop, n int, args map[string]any) toolResult {
	entry, err := argString(args, "script", true)
	if err != nil {
		return errorf("%v", err)
	}
	var argv []string
	if raw, ok := args["args"]; ok && raw != nil {
		list, ok := raw.([]any)
		if !ok {
			return errorf("argument \"args\" must be an array of strings")
		}
		for _, a := range list {
			s, ok := a.(string)
			if !ok {
				return errorf("argument \"args\" must be an array of strings")
			}
			argv = append(argv, s)
		}
	}
	secs, err := argInt(args, "timeout_seconds")
	if err != nil {
		return errorf("%v", err)
	}
	allowed := l.skills.scripts()
	if !slices.Contains(allowed, entry) {
		return errorf("script %q is not allowlisted; allowed: %s", entry, strings.Join(allowed, ", "))
	}
	name, rel, _ := strings.Cut(entry, ":")
	s := l.skills.get(name)
	if s == nil {
		return errorf("script %q: not in the skill registry", entry)
	}
	f, ok := s.file(rel)
	if !ok {
		return errorf("script %q: not in the skill registry", entry)
	}
	sandboxPath := path.Join(s.SandboxDir, rel)
	// Check the sandbox copy against the digest recorded when the run
	// started, then run exactly that path.
	data, err := l.readSandboxFile(ctx, sandboxPath, MaxSkillFileBytes)
	if err != nil {
		return errorf("script %q: %v", entry, err)
	}
	rec := SkillScriptRun{Time: time.Now().UTC(), Skill: name, Path: rel, SHA256: sha256Hex(data), Args: argv, ExitCode: -1}
	if rec.SHA256 != f.SHA256 {
		rec.Error = "sha256 does not match the resolved skill (" + f.SHA256 + "); not run"
		out := errorf("script %q: sha256 %s does not match the resolved skill (%s); refusing to run it", entry, rec.SHA256, f.SHA256)
		return l.scriptRecorded(n, entry, rec, out)
	}
	cmd := append(interpreter(data), sandboxPath)
	cmd = append(cmd, argv...)
	timeout := DefaultBashTimeout
	if secs > 0 {
		timeout = min(time.Duration(secs)*time.Second, MaxBashTimeout)
	}
	env := map[string]string{}
	for k, v := range l.env {
		env[k] = v
	}
	env["SKILL_NAME"], env["SKILL_DIR"] = name, s.SandboxDir
	start := time.Now()
	res, err := l.sess.Exec(ctx, sandbox.ExecRequest{Args: cmd, Env: env, Cwd: l.workDir, Timeout: timeout})
	rec.DurationMS = msSince(start)
	if err != nil {
		rec.Error = err.Error()
		return l.scriptRecorded(n, entry, rec, errorf("script %q: %v", entry, err))
	}
	rec.ExitCode, rec.TimedOut = res.ExitCode, res.TimedOut
	return l.scriptRecorded(n, entry, rec, commandResult(res, timeout))
}

// scriptRecorded records rec in skill-scripts.jsonl and returns out, or an
// error result when the record cannot be written.
func (l *loop) scriptRecorded(n int, entry string, rec SkillScriptRun, out toolResult) toolResult {
	if err := l.recordSkillScript(n, rec); err != nil {
		return errorf("script %q: recording the run in %s: %v (exit code %d)", entry, SkillScriptsFile, err, rec.ExitCode)
	}
	return out
}

// interpreter returns the argv prefix running a script: its #! line (split
// into at most interpreter + one argument, as the kernel does), else sh.
func interpreter(script []byte) []string {
	s := string(script)
	if !strings.HasPrefix(s, "#!") {
		return []string{"sh"}
	}
	line, _, _ := strings.Cut(s[2:], "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return []string{"sh"}
	}
	prog, arg, has := strings.Cut(line, " ")
	if has && strings.TrimSpace(arg) != "" {
		return []string{prog, strings.TrimSpace(arg)}
	}
	return []string{prog}
}

func runFetchSkill(ctx context.Context, l *loop, _ int, args map[string]any) toolResult {
	url, err := argString(args, "url", true)
	if err != nil {
		return errorf("%v", err)
	}
	if !strings.HasPrefix(url, "https://") {
		return errorf("fetch_skill: %q is not an https URL", url)
	}
	res, err := l.exec(ctx, []string{runtime.FullsendBinary, "fetch-skill", url}, nil, 5*time.Minute)
	if err != nil {
		return errorf("fetch_skill: %v", err)
	}
	if res.ExitCode != 0 {
		return errorf("fetch_skill %s: %s", url, strings.TrimSpace(string(res.Stderr)))
	}
	dir := strings.TrimSpace(string(res.Stdout))
	if !strings.HasPrefix(dir, runtime.SandboxRoot+"/") || strings.ContainsAny(dir, "\n\x00") {
		return errorf("fetch_skill %s: unexpected answer %q", url, dir)
	}
	md, err := l.readSandboxFile(ctx, path.Join(dir, "SKILL.md"), MaxSkillMDBytes)
	if err != nil {
		return errorf("fetch_skill %s: reading SKILL.md: %v", url, err)
	}
	meta := parseSkillFrontmatter(md)
	name := path.Base(dir)
	if runtime.CheckName("skill", meta.name) == nil {
		name = meta.name
	}
	if l.skills.get(name) != nil {
		return errorf("fetch_skill %s: a skill named %q is already available", url, name)
	}
	sk := &Skill{Name: name, Description: meta.description, Source: "runtime_fetch", SandboxDir: dir, Notes: append([]string{"fetched from " + url}, meta.notes...)}
	l.skills.Skills = append(l.skills.Skills, sk)
	if err := l.rd.writeJSON(SkillRegistryFile, l.skills); err != nil {
		return errorf("fetch_skill: recording the registry: %v", err)
	}
	return toolResult{text: fmt.Sprintf("skill %q is now available at %s: %s\nRead its instructions with read_skill_resource(skill=%q, path=\"SKILL.md\").", name, dir, meta.description, name)}
}
