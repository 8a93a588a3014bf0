package native

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/hooks"
	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// Tool names.
const (
	ToolBash              = "bash"
	ToolReadFile          = "read_file"
	ToolWriteFile         = "write_file"
	ToolEditFile          = "edit_file"
	ToolListDir           = "list_dir"
	ToolViewImage         = "view_image"
	ToolReadSkillResource = "read_skill_resource"
	ToolRunSkillScript    = "run_skill_script"
	ToolFetchSkill        = "fetch_skill"
	ToolDelegateTask      = "delegate_task"
)

// Bounds of the file tools.
const (
	MaxReadBytes       = 8 << 20 // read_file / edit_file input
	MaxImageBytes      = 5 << 20 // view_image
	DefaultBashTimeout = 2 * time.Minute
	MaxBashTimeout     = 10 * time.Minute
)

// Tool profiles of delegate_task children: a child's tool table is
// exactly its profile's (read_skill_resource only when there are skills).
var profiles = map[string][]string{
	ProfileDefault:  {ToolBash, ToolReadFile, ToolWriteFile, ToolEditFile, ToolListDir, ToolViewImage, ToolReadSkillResource},
	ProfileReadOnly: {ToolReadFile, ToolListDir, ToolViewImage, ToolReadSkillResource},
	ProfileWebFetch: {ToolWebFetch},
}

// profileNames lists the known profiles in a fixed order.
var profileNames = []string{ProfileDefault, ProfileReadOnly, ProfileWebFetch}

// ProfileNames lists the delegate_task child profiles this runtime knows.
func ProfileNames() []string { return slices.Clone(profileNames) }

type toolResult struct {
	text    string
	images  []model.Block
	isError bool
	// stops are the security stops the tool made itself (web_fetch's
	// content scan): each becomes an EventVerdict, as the hooks' do.
	stops []stop
}

func errorf(format string, a ...any) toolResult {
	return toolResult{text: "error: " + fmt.Sprintf(format, a...), isError: true}
}

type tool struct {
	spec model.ToolSpec
	run  func(ctx context.Context, l *loop, n int, args map[string]any) toolResult
}

// claudeNames is the one mapping from native tools to Claude Code tool
// names. The hook rules (package hooks: bash risk, SSRF, canary, tool
// allowlist) are written for Claude Code calls, so every native call is
// shown to them under the first name, with its arguments renamed to the
// Claude Code input fields (hookInput); a tool allowlist (the agent's
// frontmatter tools:) permits the native tool when it permits any of the
// names:
//
//	native               Claude Code names   notes
//	bash                 Bash                Bash(a,b) limits the programs of the command
//	read_file            Read
//	write_file           Write
//	edit_file            Edit, MultiEdit
//	list_dir             LS, Glob            names only (Glob lists files in Claude Code)
//	view_image           Read
//	read_skill_resource  Skill, Read         Claude Code reads skill files with Read
//	run_skill_script     Skill               pinned, allowlisted skill scripts only
//	fetch_skill          Bash                checked as the command "fullsend fetch-skill URL"
//	delegate_task        Task, Agent         the child loop keeps the parent's checks
//	web_fetch            WebFetch            runs on the host through fetch.WebClient
//
// A tool not in this table is shown to the rules under its own name.
var claudeNames = map[string][]string{
	ToolBash:              {"Bash"},
	ToolReadFile:          {"Read"},
	ToolWriteFile:         {"Write"},
	ToolEditFile:          {"Edit", "MultiEdit"},
	ToolListDir:           {"LS", "Glob"},
	ToolViewImage:         {"Read"},
	ToolReadSkillResource: {"Skill", "Read"},
	ToolRunSkillScript:    {"Skill"},
	ToolFetchSkill:        {"Bash"},
	ToolDelegateTask:      {"Task", "Agent"},
	ToolWebFetch:          {"WebFetch"},
}

func schema(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	if required == nil {
		req = []byte("[]")
	}
	return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `,"additionalProperties":false}`)
}

// allTools is filled by init (the delegate tool refers back to the table).
var allTools map[string]*tool

func init() { allTools = toolTable() }

func toolTable() map[string]*tool {
	return map[string]*tool{
		ToolWebFetch: webFetchTool(),
		ToolBash: {run: runBash, spec: model.ToolSpec{Name: ToolBash,
			Description: "Run a bash command in the sandbox (working directory: the repository). Returns stdout, stderr and the exit code. Output beyond 32 KiB is truncated.",
			Parameters:  schema(`"command":{"type":"string","description":"the bash command"},"timeout_seconds":{"type":"integer","minimum":1,"maximum":600,"description":"default 120"}`, "command")}},
		ToolReadFile: {run: runReadFile, spec: model.ToolSpec{Name: ToolReadFile,
			Description: "Read a text file in the sandbox. Optional 1-based line offset and line limit.",
			Parameters:  schema(`"path":{"type":"string"},"offset":{"type":"integer","minimum":1},"limit":{"type":"integer","minimum":1}`, "path")}},
		ToolWriteFile: {run: runWriteFile, spec: model.ToolSpec{Name: ToolWriteFile,
			Description: "Create or overwrite a file in the sandbox with the given content (parent directories are created).",
			Parameters:  schema(`"path":{"type":"string"},"content":{"type":"string"}`, "path", "content")}},
		ToolEditFile: {run: runEditFile, spec: model.ToolSpec{Name: ToolEditFile,
			Description: "Replace one exact occurrence of old_string with new_string in a file. Fails when old_string occurs zero times or more than once: then include more surrounding lines to make it unique.",
			Parameters:  schema(`"path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"}`, "path", "old_string", "new_string")}},
		ToolListDir: {run: runListDir, spec: model.ToolSpec{Name: ToolListDir,
			Description: "List a directory in the sandbox (directories end in '/').",
			Parameters:  schema(`"path":{"type":"string","description":"default: the working directory"}`)}},
		ToolViewImage: {run: runViewImage, spec: model.ToolSpec{Name: ToolViewImage,
			Description: "Look at an image file (png, jpeg, gif, webp; at most 5 MiB) inside /sandbox/workspace.",
			Parameters:  schema(`"path":{"type":"string"}`, "path")}},
		ToolReadSkillResource: {run: runReadSkillResource, spec: model.ToolSpec{Name: ToolReadSkillResource,
			Description: "Read a file of an available skill: start with path \"SKILL.md\" for its instructions, then any file it mentions.",
			Parameters:  schema(`"skill":{"type":"string"},"path":{"type":"string","description":"relative to the skill directory"}`, "skill", "path")}},
		ToolRunSkillScript: {run: runSkillScript, spec: model.ToolSpec{Name: ToolRunSkillScript,
			Description: "Run an allowlisted skill script, named exactly as listed (\"skill:scripts/name.sh\"), with arguments.",
			Parameters:  schema(`"script":{"type":"string"},"args":{"type":"array","items":{"type":"string"}},"timeout_seconds":{"type":"integer","minimum":1,"maximum":600}`, "script")}},
		ToolFetchSkill: {run: runFetchSkill, spec: model.ToolSpec{Name: ToolFetchSkill,
			Description: "Fetch an additional skill by its pinned URL (https://…#sha256=…) from an allowed location; it becomes available to read_skill_resource.",
			Parameters:  schema(`"url":{"type":"string"}`, "url")}},
		ToolDelegateTask: {run: runDelegate, spec: delegateSpec([]string{ProfileDefault}, 1)},
	}
}

// delegateSpec is the delegate_task tool as offered: its profile argument
// lists exactly the profiles the run allows.
func delegateSpec(allowed []string, parallel int) model.ToolSpec {
	enum, _ := json.Marshal(allowed)
	desc := "Delegate a focused sub-task to a child agent with a fresh context and the named tool profile (default: bash, read/write/edit files; read_only: read and list files only; web_fetch: fetch web pages only, no workspace). " +
		"You receive its summary, or with returnSchema a JSON value validated against that schema, in which strings and objects the schema does not pin down (enum, const, pattern, a checked format: date-time, date, time, uuid, ipv4, ipv6; unlisted keys) are replaced by {\"@link\":\"opaque:#/pointer\"} references."
	if parallel > 1 {
		desc += fmt.Sprintf(" Several delegate_task calls in one turn run at the same time (up to %d at once), each child in its own sandbox holding a copy of the workspace; a child's file changes are not copied back.", parallel)
	}
	return model.ToolSpec{Name: ToolDelegateTask, Description: desc,
		Parameters: schema(`"goal":{"type":"string","description":"complete, self-contained instructions"},"profile":{"type":"string","enum":`+string(enum)+`,"description":"when omitted: default"},"returnSchema":{"description":"optional JSON Schema the child's return value must satisfy"}`, "goal")}
}

func parseArgs(s string) (map[string]any, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the object")
	}
	if m == nil {
		return nil, fmt.Errorf("null is not an object")
	}
	return m, nil
}

// toolArgs reads the arguments of a tool taking several: the first bad
// argument is kept in err (reads after it return zero values), so a tool
// checks once, after its reads, and reports the same error argString or
// argInt would have at that argument.
type toolArgs struct {
	m   map[string]any
	err error
}

func (a *toolArgs) str(key string, required bool) string {
	if a.err != nil {
		return ""
	}
	s, err := argString(a.m, key, required)
	a.err = err
	return s
}

func (a *toolArgs) int(key string) int {
	if a.err != nil {
		return 0
	}
	n, err := argInt(a.m, key)
	a.err = err
	return n
}

func argString(args map[string]any, key string, required bool) (string, error) {
	v, ok := args[key]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("missing required argument %q", key)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("argument %q must be a string", key)
	}
	return s, nil
}

func argInt(args map[string]any, key string) (int, error) {
	v, ok := args[key]
	if !ok || v == nil {
		return 0, nil
	}
	switch x := v.(type) {
	case json.Number:
		n, err := strconv.Atoi(x.String())
		if err != nil {
			return 0, fmt.Errorf("argument %q must be an integer", key)
		}
		return n, nil
	case string:
		n, err := strconv.Atoi(x)
		if err != nil {
			return 0, fmt.Errorf("argument %q must be an integer", key)
		}
		return n, nil
	}
	return 0, fmt.Errorf("argument %q must be an integer", key)
}

// hookInput renders a tool call the way the hook rules expect a Claude Code
// tool call.
func hookInput(event, name string, args map[string]any, output *string) *hooks.Input {
	claude, aliases := name, []string(nil)
	if names := claudeNames[name]; len(names) > 0 {
		claude, aliases = names[0], names[1:]
	}
	in := map[string]any{}
	switch name {
	case ToolBash:
		in["command"] = args["command"]
	case ToolReadFile, ToolViewImage:
		in["file_path"] = args["path"]
	case ToolWriteFile:
		in["file_path"], in["content"] = args["path"], args["content"]
	case ToolEditFile:
		in["file_path"], in["old_string"], in["new_string"] = args["path"], args["old_string"], args["new_string"]
	case ToolFetchSkill:
		in["command"] = "fullsend fetch-skill " + fmt.Sprint(args["url"])
	default:
		for k, v := range args {
			in[k] = v
		}
	}
	ti, _ := json.Marshal(in)
	h := &hooks.Input{HookEventName: event, ToolName: claude, ToolAliases: aliases, ToolInput: ti}
	if output != nil {
		h.ToolResponse, _ = json.Marshal(*output)
	}
	return h
}

// exec runs argv in the sandbox with the loop's environment.
func (l *loop) exec(ctx context.Context, args []string, stdin []byte, timeout time.Duration) (sandbox.ExecResult, error) {
	return l.sess.Exec(ctx, sandbox.ExecRequest{Args: args, Stdin: stdin, Env: l.env, Cwd: l.workDir, Timeout: timeout})
}

// envPrelude exports the workspace .env files the runner wrote, as the
// claude runtime does before starting the agent.
const envPrelude = `set -a; [ -f /sandbox/workspace/.env ] && . /sandbox/workspace/.env; for __f in /sandbox/workspace/.env.d/*; do [ -f "$__f" ] && . "$__f"; done; unset __f; set +a
`

func runBash(ctx context.Context, l *loop, _ int, args map[string]any) toolResult {
	a := toolArgs{m: args}
	cmd, secs := a.str("command", true), a.int("timeout_seconds")
	if a.err != nil {
		return errorf("%v", a.err)
	}
	timeout := DefaultBashTimeout
	if secs > 0 {
		timeout = min(time.Duration(secs)*time.Second, MaxBashTimeout)
	}
	res, err := l.exec(ctx, []string{"bash", "-c", envPrelude + cmd}, nil, timeout)
	if err != nil {
		return errorf("running the command: %v", err)
	}
	return commandResult(res, timeout)
}

func commandResult(res sandbox.ExecResult, timeout time.Duration) toolResult {
	var b strings.Builder
	b.Write(res.Stdout)
	if len(res.Stderr) > 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("[stderr]\n")
		b.Write(res.Stderr)
	}
	out := toolResult{}
	switch {
	case res.TimedOut:
		fmt.Fprintf(&b, "\n[timed out after %s]", timeout)
		out.isError = true
	case res.ExitCode != 0:
		fmt.Fprintf(&b, "\n[exit code %d]", res.ExitCode)
		out.isError = true
	case b.Len() == 0:
		b.WriteString("[no output, exit code 0]")
	}
	out.text = b.String()
	return out
}

// readSandboxFile reads at most max bytes of p (relative to the working
// directory); over max is an error, never a silent cut.
func (l *loop) readSandboxFile(ctx context.Context, p string, max int) ([]byte, error) {
	res, err := l.exec(ctx, []string{"head", "-c", strconv.Itoa(max + 1), "--", p}, nil, time.Minute)
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("%s", firstLine(res.Stderr, "cannot read "+p))
	}
	if len(res.Stdout) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, max)
	}
	return res.Stdout, nil
}

// writeSandboxFile replaces p with data, creating parent directories.
func (l *loop) writeSandboxFile(ctx context.Context, p string, data []byte) error {
	script := `d=$(dirname -- "$1") && mkdir -p -- "$d" && cat > "$1"`
	res, err := l.exec(ctx, []string{"sh", "-c", script, "sh", p}, data, time.Minute)
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("%s", firstLine(res.Stderr, "cannot write "+p))
	}
	return nil
}

func firstLine(b []byte, def string) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return def
	}
	return s
}

func runReadFile(ctx context.Context, l *loop, _ int, args map[string]any) toolResult {
	a := toolArgs{m: args}
	p, off, lim := a.str("path", true), a.int("offset"), a.int("limit")
	if a.err != nil {
		return errorf("%v", a.err)
	}
	data, err := l.readSandboxFile(ctx, p, MaxReadBytes)
	if err != nil {
		return errorf("read_file %s: %v", p, err)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return errorf("read_file %s: binary file (%d bytes); use bash (e.g. xxd | head) or view_image", p, len(data))
	}
	text := string(data)
	if off > 0 || lim > 0 {
		lines := strings.SplitAfter(text, "\n")
		start := max(off, 1) - 1
		if start >= len(lines) {
			return errorf("read_file %s: offset %d beyond the last line (%d)", p, off, len(lines))
		}
		end := len(lines)
		if lim > 0 && start+lim < end {
			end = start + lim
		}
		text = fmt.Sprintf("[lines %d-%d of %d]\n", start+1, end, len(lines)) + strings.Join(lines[start:end], "")
	}
	if text == "" {
		text = "[empty file]"
	}
	return toolResult{text: text}
}

func runWriteFile(ctx context.Context, l *loop, _ int, args map[string]any) toolResult {
	a := toolArgs{m: args}
	p, content := a.str("path", true), a.str("content", true)
	if a.err != nil {
		return errorf("%v", a.err)
	}
	if err := l.writeSandboxFile(ctx, p, []byte(content)); err != nil {
		return errorf("write_file %s: %v", p, err)
	}
	return toolResult{text: fmt.Sprintf("wrote %d bytes to %s", len(content), p)}
}

func runEditFile(ctx context.Context, l *loop, _ int, args map[string]any) toolResult {
	a := toolArgs{m: args}
	p, oldS, newS := a.str("path", true), a.str("old_string", true), a.str("new_string", true)
	if a.err != nil {
		return errorf("%v", a.err)
	}
	if oldS == "" {
		return errorf("edit_file %s: old_string is empty; use write_file to create a file", p)
	}
	if oldS == newS {
		return errorf("edit_file %s: old_string and new_string are identical", p)
	}
	data, err := l.readSandboxFile(ctx, p, MaxReadBytes)
	if err != nil {
		return errorf("edit_file %s: %v", p, err)
	}
	switch n := strings.Count(string(data), oldS); n {
	case 0:
		return errorf("edit_file %s: old_string not found; read the file and copy the exact text (whitespace included)", p)
	case 1:
	default:
		return errorf("edit_file %s: old_string occurs %d times; include more surrounding lines so it matches exactly once", p, n)
	}
	updated := strings.Replace(string(data), oldS, newS, 1)
	if err := l.writeSandboxFile(ctx, p, []byte(updated)); err != nil {
		return errorf("edit_file %s: %v", p, err)
	}
	line := strings.Count(string(data)[:strings.Index(string(data), oldS)], "\n") + 1
	return toolResult{text: fmt.Sprintf("edited %s: replaced 1 occurrence at line %d", p, line)}
}

func runListDir(ctx context.Context, l *loop, _ int, args map[string]any) toolResult {
	p, err := argString(args, "path", false)
	if err != nil {
		return errorf("%v", err)
	}
	if p == "" {
		p = "."
	}
	res, err := l.exec(ctx, []string{"ls", "-1Ap", "--", p}, nil, time.Minute)
	if err != nil {
		return errorf("list_dir %s: %v", p, err)
	}
	if res.ExitCode != 0 {
		return errorf("list_dir %s: %s", p, firstLine(res.Stderr, "cannot list"))
	}
	if len(res.Stdout) == 0 {
		return toolResult{text: "[empty directory]"}
	}
	return toolResult{text: string(res.Stdout)}
}

var imageExt = map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}

func runViewImage(ctx context.Context, l *loop, n int, args map[string]any) toolResult {
	p, err := argString(args, "path", true)
	if err != nil {
		return errorf("%v", err)
	}
	// Resolve symlinks in the sandbox and require the workspace.
	res, err := l.exec(ctx, []string{"realpath", "-e", "--", p}, nil, time.Minute)
	if err != nil {
		return errorf("view_image %s: %v", p, err)
	}
	if res.ExitCode != 0 {
		return errorf("view_image %s: %s", p, firstLine(res.Stderr, "no such file"))
	}
	real := strings.TrimSpace(string(res.Stdout))
	if !strings.HasPrefix(real, runtime.WorkspaceDir+"/") {
		return errorf("view_image %s: resolves to %s, outside %s", p, real, runtime.WorkspaceDir)
	}
	data, err := l.readSandboxFile(ctx, real, MaxImageBytes)
	if err != nil {
		return errorf("view_image %s: %v", p, err)
	}
	mt := http.DetectContentType(data)
	ext, ok := imageExt[mt]
	if !ok {
		return errorf("view_image %s: %s is not png, jpeg, gif or webp", p, mt)
	}
	block := model.Block{Type: model.BlockImage, MediaType: mt, Data: base64.StdEncoding.EncodeToString(data), SHA256: sha256Hex(data), Size: len(data)}
	if rel, err := l.rd.writeImage(n, ext, data); err == nil {
		block.File = rel
	} else {
		return errorf("view_image %s: keeping the image in the run directory: %v", p, err)
	}
	return toolResult{text: fmt.Sprintf("image %s (%s, %d bytes)", path.Clean(real), mt, len(data)), images: []model.Block{block}}
}
