package script

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// Name is the registry name of this runtime.
const Name = "script"

// OptionScript is the RunInput.Options key holding the host path of the
// script file.
const OptionScript = "script"

// Runtime runs a script. Create one per run with New.
type Runtime struct {
	lastResult string // ResultPath of the previous Run, removed by CleanupIteration
}

var _ runtime.Runtime = (*Runtime)(nil)

// New returns a script runtime.
func New() *Runtime { return &Runtime{} }

// Name implements runtime.Runtime.
func (*Runtime) Name() string { return Name }

// ConfigDir implements runtime.Runtime: the shared layout directory.
func (*Runtime) ConfigDir() string { return runtime.ClaudeConfigDir }

// Env implements runtime.Runtime; the script runtime exports nothing.
func (*Runtime) Env(runtime.BootstrapInput) map[string]string { return map[string]string{} }

// Bootstrap implements runtime.Runtime: uploads the agent definition, skills
// and plugins into the shared layout (scripts may read them).
func (r *Runtime) Bootstrap(ctx context.Context, s sandbox.Session, in runtime.BootstrapInput) error {
	if err := runtime.UploadConfig(ctx, s, r.ConfigDir(), in); err != nil {
		return &runtime.Error{Runtime: Name, Op: "bootstrap", Err: err}
	}
	return nil
}

// CleanupIteration implements runtime.Runtime: removes the previous result.
func (r *Runtime) CleanupIteration(ctx context.Context, s sandbox.Session) error {
	if err := runtime.RemoveFile(ctx, s, r.lastResult); err != nil {
		return &runtime.Error{Runtime: Name, Op: "cleanup", Err: err}
	}
	return nil
}

// StepError is the failure of one step.
type StepError struct {
	Index int // 1-based
	Line  int
	Op    string
	Name  string
	Err   error
}

func (e *StepError) Error() string {
	label := e.Op
	if e.Name != "" {
		label = fmt.Sprintf("%s %q", e.Op, e.Name)
	}
	return fmt.Sprintf("step %d (%s, line %d): %v", e.Index, label, e.Line, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// ErrExpectation marks a failed expectation (wrapped in StepError).
var ErrExpectation = errors.New("expectation failed")

// Run implements runtime.Runtime: executes the script named by
// in.Options["script"]. Steps run in order inside the sandbox session; the
// first failing step ends the run with ExitCode 1 (or the fail op's code).
func (r *Runtime) Run(ctx context.Context, s sandbox.Session, in runtime.RunInput) (*runtime.Outcome, error) {
	wrap := func(op string, err error) error { return &runtime.Error{Runtime: Name, Op: op, Err: err} }
	if err := runtime.CheckOptions(Name, in.Options, OptionScript); err != nil {
		return nil, err
	}
	file := in.Options[OptionScript]
	if file == "" {
		return nil, wrap("run", errors.New(`option "script" (host path of the script file) is required`))
	}
	sc, err := Load(file)
	if err != nil {
		return nil, wrap("run", err)
	}
	if in.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, in.Timeout)
		defer cancel()
	}
	r.lastResult = in.ResultPath
	x := &execution{s: s, in: in, vars: baseVars(in), out: &runtime.Outcome{Turns: 1}}
	in.Emit(runtime.Event{Kind: runtime.EventTurn, Turn: 1, Name: path.Base(file)})
	for i := range sc.Steps {
		st := &sc.Steps[i]
		if !st.applies(in) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return x.finish(ctx, err)
		}
		if err := x.step(ctx, i, st); err != nil {
			return x.finish(ctx, &StepError{Index: i + 1, Line: st.line, Op: st.Op(), Name: st.Name, Err: err})
		}
	}
	return x.finish(ctx, nil)
}

type execution struct {
	s    sandbox.Session
	in   runtime.RunInput
	vars map[string]string
	out  *runtime.Outcome
	exit int // set by the fail op
}

func baseVars(in runtime.RunInput) map[string]string {
	v := map[string]string{}
	for k, val := range in.Env {
		v[k] = val
	}
	v["ITERATION"] = strconv.Itoa(in.Iteration)
	v["RESULT_PATH"] = in.ResultPath
	v["WORKDIR"] = in.WorkDir
	v["PROMPT"] = in.Prompt
	v["FEEDBACK"] = in.Feedback
	v["AGENT"] = in.AgentName
	v["MODEL"] = in.Model
	return v
}

func (x *execution) finish(ctx context.Context, err error) (*runtime.Outcome, error) {
	o := x.out
	switch {
	case err == nil:
		o.StopReason = runtime.StopCompleted
		x.in.Emit(runtime.Event{Kind: runtime.EventResult, Name: runtime.StopCompleted, Turn: o.Turns})
		return o, nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		o.StopReason, o.ExitCode = runtime.StopTimeout, -1
	case ctx.Err() != nil:
		o.StopReason, o.ExitCode = runtime.StopCanceled, -1
	default:
		o.StopReason, o.ExitCode = runtime.StopError, 1
		if x.exit != 0 {
			o.ExitCode = x.exit
		}
	}
	o.Errors = append(o.Errors, err.Error())
	x.in.Emit(runtime.Event{Kind: runtime.EventError, Text: runtime.Truncate(err.Error()), IsError: true})
	x.in.Emit(runtime.Event{Kind: runtime.EventResult, Name: o.StopReason, IsError: true, Turn: o.Turns})
	return o, &runtime.Error{Runtime: Name, Op: "run", Err: err}
}

func (st *Step) applies(in runtime.RunInput) bool {
	w := st.When
	if w == nil {
		return true
	}
	if w.Iteration != 0 && in.Iteration != w.Iteration {
		return false
	}
	if w.FromIteration != 0 && in.Iteration < w.FromIteration {
		return false
	}
	if w.Feedback != nil && *w.Feedback != (in.Feedback != "") {
		return false
	}
	return true
}

// expand substitutes ${NAME}; "$$" is a literal "$". Unknown names are
// errors; a lone "$" or "$NAME" is left for the shell.
func (x *execution) expand(s string) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return "", fmt.Errorf("unterminated ${ in %q", s)
			}
			name := s[i+2 : i+2+end]
			v, ok := x.vars[name]
			if !ok {
				return "", fmt.Errorf("variable ${%s} is not set (known: %s)", name, strings.Join(x.varNames(), ", "))
			}
			b.WriteString(v)
			i += 2 + end
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func (x *execution) varNames() []string {
	n := make([]string, 0, len(x.vars))
	for k := range x.vars {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func (x *execution) expandAll(ss ...*string) error {
	for _, p := range ss {
		v, err := x.expand(*p)
		if err != nil {
			return err
		}
		*p = v
	}
	return nil
}

// expandValue substitutes variables in every string of a YAML value.
func (x *execution) expandValue(v any) (any, error) {
	switch t := v.(type) {
	case string:
		return x.expand(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			ev, err := x.expandValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = ev
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			ev, err := x.expandValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = ev
		}
		return out, nil
	}
	return v, nil
}

func (x *execution) exec(ctx context.Context, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	env := map[string]string{}
	for k, v := range x.in.Env {
		env[k] = v
	}
	for k, v := range req.Env {
		env[k] = v
	}
	req.Env = env
	if req.Cwd == "" {
		req.Cwd = x.in.WorkDir
	}
	res, err := x.s.Exec(ctx, req)
	if err == nil && res.TimedOut {
		err = errors.New("timed out")
	}
	return res, err
}

// step runs one step, emitting a tool_call and a tool_result event.
func (x *execution) step(ctx context.Context, i int, st *Step) error {
	id := fmt.Sprintf("step-%d", i+1)
	op := st.Op()
	x.out.ToolCalls++
	_, output, err := x.run(ctx, id, op, st)
	res := output
	if err != nil {
		res = err.Error()
	}
	x.in.Emit(runtime.Event{Kind: runtime.EventToolResult, Name: op, ID: id, Text: runtime.Truncate(res), IsError: err != nil})
	return err
}

func (x *execution) call(id, op, text string) {
	x.in.Emit(runtime.Event{Kind: runtime.EventToolCall, Name: op, ID: id, Text: runtime.Truncate(text)})
}

func (x *execution) run(ctx context.Context, id, op string, st *Step) (summary, output string, err error) {
	switch {
	case st.Say != nil:
		text, err := x.expand(*st.Say)
		if err != nil {
			x.call(id, op, *st.Say)
			return "", "", err
		}
		x.call(id, op, text)
		x.in.Emit(runtime.Event{Kind: runtime.EventText, Text: runtime.Truncate(text)})
		return text, "", nil
	case st.Read != nil:
		return x.read(ctx, id, op, *st.Read)
	case st.Write != nil:
		w := *st.Write
		if err := x.expandAll(&w.Path, &w.Content); err != nil {
			x.call(id, op, st.Write.Path)
			return "", "", err
		}
		x.call(id, op, w.Path)
		return w.Path, fmt.Sprintf("wrote %d bytes", len(w.Content)), x.writeFile(ctx, w.Path, []byte(w.Content))
	case st.Exec != nil:
		return x.runExec(ctx, id, op, *st.Exec)
	case st.Expect != nil:
		return x.expect(ctx, id, op, *st.Expect)
	case st.FetchSkill != nil:
		return x.fetchSkill(ctx, id, op, *st.FetchSkill)
	case st.WriteResult != nil:
		return x.writeResult(ctx, id, op, *st.WriteResult)
	case st.Fail != nil:
		f := *st.Fail
		msg, err := x.expand(f.Message)
		if err != nil {
			return "", "", err
		}
		x.call(id, op, msg)
		x.exit = f.ExitCode
		if x.exit == 0 {
			x.exit = 1
		}
		if msg == "" {
			msg = "script failed on purpose"
		}
		return "", "", errors.New(msg)
	}
	return "", "", errors.New("no operation")
}

func (x *execution) catFile(ctx context.Context, p string) ([]byte, bool, error) {
	res, err := x.exec(ctx, sandbox.ExecRequest{Args: []string{"cat", "--", p}})
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", p, err)
	}
	if res.ExitCode != 0 {
		return nil, false, nil
	}
	return res.Stdout, true, nil
}

func (x *execution) read(ctx context.Context, id, op string, r ReadOp) (string, string, error) {
	if err := x.expandAll(&r.Path, &r.ExpectContains); err != nil {
		x.call(id, op, r.Path)
		return "", "", err
	}
	x.call(id, op, r.Path)
	data, ok, err := x.catFile(ctx, r.Path)
	if err != nil {
		return "", "", err
	}
	if !ok {
		return "", "", fmt.Errorf("%w: %s cannot be read", ErrExpectation, r.Path)
	}
	if r.ExpectContains != "" && !bytes.Contains(data, []byte(r.ExpectContains)) {
		return "", string(data), fmt.Errorf("%w: %s does not contain %q", ErrExpectation, r.Path, r.ExpectContains)
	}
	if r.Save != "" {
		x.vars[r.Save] = string(data)
	}
	return r.Path, string(data), nil
}

func (x *execution) writeFile(ctx context.Context, p string, data []byte) error {
	return runtime.WriteFile(ctx, x.s, p, data)
}

func (x *execution) runExec(ctx context.Context, id, op string, e ExecOp) (string, string, error) {
	args := append([]string(nil), e.Args...)
	for i := range args {
		if err := x.expandAll(&args[i]); err != nil {
			x.call(id, op, strings.Join(e.Args, " "))
			return "", "", err
		}
	}
	env := map[string]string{}
	for k, v := range e.Env {
		ev, err := x.expand(v)
		if err != nil {
			x.call(id, op, e.Cmd+strings.Join(e.Args, " "))
			return "", "", err
		}
		env[k] = ev
	}
	if err := x.expandAll(&e.Cmd, &e.Cwd, &e.Stdin, &e.ExpectStdoutContains); err != nil {
		x.call(id, op, e.Cmd+strings.Join(e.Args, " "))
		return "", "", err
	}
	display := e.Cmd
	if e.Cmd != "" {
		args = []string{"sh", "-c", e.Cmd}
	} else {
		display = strings.Join(args, " ")
	}
	x.call(id, op, display)
	req := sandbox.ExecRequest{Args: args, Env: env, Cwd: e.Cwd, Timeout: e.Timeout}
	if e.Stdin != "" {
		req.Stdin = []byte(e.Stdin)
	}
	res, err := x.exec(ctx, req)
	combined := string(res.Stdout) + string(res.Stderr)
	if err != nil {
		return display, combined, fmt.Errorf("%s: %w", display, err)
	}
	want := 0
	if e.ExpectExit != nil {
		want = *e.ExpectExit
	}
	if !e.AnyExit && res.ExitCode != want {
		return display, combined, fmt.Errorf("%w: %s exited %d, want %d: %s", ErrExpectation, display, res.ExitCode, want, tail(res.Stderr, res.Stdout))
	}
	if e.ExpectStdoutContains != "" && !bytes.Contains(res.Stdout, []byte(e.ExpectStdoutContains)) {
		return display, combined, fmt.Errorf("%w: stdout of %s does not contain %q", ErrExpectation, display, e.ExpectStdoutContains)
	}
	if e.outputRe != nil && !e.outputRe.MatchString(combined) {
		return display, combined, fmt.Errorf("%w: output of %s does not match /%s/", ErrExpectation, display, e.ExpectOutput)
	}
	if e.Save != "" {
		x.vars[e.Save] = strings.TrimRight(string(res.Stdout), "\n")
	}
	return display, combined, nil
}

// tail returns the last line of the first non-empty buffer, for error text.
func tail(bufs ...[]byte) string {
	s := runtime.LastLine(bufs...)
	if s == "" {
		return "(no output)"
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func (x *execution) expect(ctx context.Context, id, op string, e ExpectOp) (string, string, error) {
	if err := x.expandAll(&e.Path, &e.Contains, &e.NotContains); err != nil {
		x.call(id, op, e.Path)
		return "", "", err
	}
	x.call(id, op, e.Path)
	res, err := x.exec(ctx, sandbox.ExecRequest{Args: []string{"test", "-e", e.Path}})
	if err != nil {
		return "", "", err
	}
	exists := res.ExitCode == 0
	wantExists := e.Exists == nil || *e.Exists
	if exists != wantExists {
		if wantExists {
			return "", "", fmt.Errorf("%w: %s does not exist", ErrExpectation, e.Path)
		}
		return "", "", fmt.Errorf("%w: %s exists", ErrExpectation, e.Path)
	}
	if !exists || e.Contains == "" && e.NotContains == "" && e.matchRe == nil {
		return e.Path, fmt.Sprintf("exists=%v", exists), nil
	}
	data, ok, err := x.catFile(ctx, e.Path)
	if err != nil {
		return "", "", err
	}
	if !ok {
		return "", "", fmt.Errorf("%w: %s cannot be read", ErrExpectation, e.Path)
	}
	switch {
	case e.Contains != "" && !bytes.Contains(data, []byte(e.Contains)):
		return "", "", fmt.Errorf("%w: %s does not contain %q", ErrExpectation, e.Path, e.Contains)
	case e.NotContains != "" && bytes.Contains(data, []byte(e.NotContains)):
		return "", "", fmt.Errorf("%w: %s contains %q", ErrExpectation, e.Path, e.NotContains)
	case e.matchRe != nil && !e.matchRe.Match(data):
		return "", "", fmt.Errorf("%w: %s does not match /%s/", ErrExpectation, e.Path, e.Matches)
	}
	return e.Path, "ok", nil
}

func (x *execution) fetchSkill(ctx context.Context, id, op string, f FetchSkillOp) (string, string, error) {
	if err := x.expandAll(&f.URL); err != nil {
		x.call(id, op, f.URL)
		return "", "", err
	}
	x.call(id, op, f.URL)
	res, err := x.exec(ctx, sandbox.ExecRequest{Args: []string{runtime.FullsendBinary, "fetch-skill", f.URL}})
	if err != nil {
		return "", "", fmt.Errorf("fetch-skill %s: %w", f.URL, err)
	}
	if res.ExitCode != 0 {
		return "", string(res.Stderr), fmt.Errorf("fetch-skill %s: exit status %d: %s", f.URL, res.ExitCode, tail(res.Stderr, res.Stdout))
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	dir := strings.TrimSpace(lines[len(lines)-1])
	if !strings.HasPrefix(dir, "/") {
		return "", string(res.Stdout), fmt.Errorf("fetch-skill %s: printed %q, want an absolute skill directory", f.URL, dir)
	}
	save := f.Save
	if save == "" {
		save = "SKILL_DIR"
	}
	x.vars[save] = dir
	return f.URL, dir, nil
}

func (x *execution) writeResult(ctx context.Context, id, op string, w WriteResultOp) (string, string, error) {
	if x.in.ResultPath == "" {
		x.call(id, op, "")
		return "", "", errors.New("write_result: the run has no result path")
	}
	x.call(id, op, x.in.ResultPath)
	var data []byte
	switch {
	case w.File != "":
		src, err := x.expand(w.File)
		if err != nil {
			return "", "", err
		}
		b, ok, err := x.catFile(ctx, src)
		if err != nil {
			return "", "", err
		}
		if !ok {
			return "", "", fmt.Errorf("%w: result source %s cannot be read", ErrExpectation, src)
		}
		data = b
	case w.JSON != "":
		s, err := x.expand(w.JSON)
		if err != nil {
			return "", "", err
		}
		data = []byte(s)
	default:
		v, err := x.expandValue(w.Value)
		if err != nil {
			return "", "", err
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return "", "", fmt.Errorf("write_result: value is not JSON-encodable: %w", err)
		}
		data = append(b, '\n')
	}
	if err := x.writeFile(ctx, x.in.ResultPath, data); err != nil {
		return "", "", err
	}
	return x.in.ResultPath, fmt.Sprintf("wrote %d bytes", len(data)), nil
}
