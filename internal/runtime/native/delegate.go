package native

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/schemacheck"
)

// Bounds of delegate_task.
const (
	MaxSummaryBytes      = 4 << 10 // child summary shown to the parent
	MaxReturnBytes       = 64 << 10
	MaxReturnCorrections = 2 // re-asks when the child's return fails its schema
)

// DelegateResult is the JSON the parent model receives from delegate_task.
type DelegateResult struct {
	Child            string            `json:"child"` // child run dir, relative to the parent's
	Profile          string            `json:"profile"`
	StopReason       string            `json:"stop_reason"`
	Turns            int               `json:"turns"`
	Summary          string            `json:"summary,omitempty"`
	StructuredReturn *StructuredReturn `json:"structuredReturn,omitempty"`
	Error            string            `json:"error,omitempty"`
}

// StructuredReturn is a child's schema-validated return value.
// Value is the parent's view of the return (see opaqueView): strings and
// objects the schema does not pin down are {"@link":"opaque:#/pointer"}
// references into the raw value, kept in the child's run directory at Raw.
type StructuredReturn struct {
	Valid  bool   `json:"valid"`
	Value  any    `json:"value,omitempty"`
	Raw    string `json:"raw,omitempty"` // raw return file, relative to the parent's run dir
	Errors string `json:"errors,omitempty"`
}

// delegation is one delegate_task call, checked and numbered (k, by call
// order) before its child runs.
type delegation struct {
	goal, profile string
	tools         []string
	sch           *schemacheck.Schema
	schemaText    []byte
	schemaDoc     any // the returnSchema as given (walked for opaque returns)
	rel           string
}

func runDelegate(ctx context.Context, l *loop, _ int, args map[string]any) toolResult {
	d, bad := l.prepareDelegate(args)
	if bad != nil {
		return *bad
	}
	return l.runDelegation(ctx, d)
}

// prepareDelegate checks the arguments of a delegate_task call and gives
// it the next child number; a refusal is the error result the model sees.
func (l *loop) prepareDelegate(args map[string]any) (*delegation, *toolResult) {
	fail := func(format string, a ...any) (*delegation, *toolResult) {
		r := errorf(format, a...)
		return nil, &r
	}
	if l.depth > 0 {
		return fail("delegate_task is not available to child agents")
	}
	goal, err := argString(args, "goal", true)
	if err != nil {
		return fail("%v", err)
	}
	if strings.TrimSpace(goal) == "" {
		return fail("delegate_task: empty goal")
	}
	d := &delegation{goal: goal}
	if d.profile, err = argString(args, "profile", false); err != nil {
		return fail("%v", err)
	}
	if d.profile == "" {
		d.profile = ProfileDefault
	}
	toolset, ok := profiles[d.profile]
	if !ok || !l.rt.profileAllowed(d.profile) {
		return fail("delegate_task: profile %q is not allowed (allowed: %s)", d.profile, strings.Join(l.rt.allowedProfiles(), ", "))
	}
	if raw, ok := args["returnSchema"]; ok && raw != nil {
		d.schemaText, err = json.Marshal(raw)
		if err != nil {
			return fail("delegate_task: returnSchema: %v", err)
		}
		d.sch, err = compileSchema("returnSchema.json", d.schemaText)
		if err != nil {
			return fail("delegate_task: returnSchema is not a usable JSON Schema: %v", err)
		}
		d.schemaDoc = raw
	}
	for _, t := range toolset {
		if t == ToolReadSkillResource && len(l.skills.names()) == 0 {
			continue
		}
		if _, ok := allTools[t]; !ok {
			return fail("delegate_task: profile %q: %s tool unavailable", d.profile, t)
		}
		d.tools = append(d.tools, t)
	}
	// A resumed run or a later validation iteration continues the
	// numbering after the children already in the run directory.
	for {
		l.children++
		d.rel = filepath.ToSlash(filepath.Join(ChildrenDir, strconv.Itoa(l.children)))
		if _, err := l.rd.d.Lstat(d.rel); errors.Is(err, fs.ErrNotExist) {
			return d, nil
		}
	}
}

// runDelegation runs one child loop to its end (with up to
// MaxReturnCorrections re-asks for a schema-valid return) and renders what
// the parent sees. It is safe to run several at once (parallel children):
// each has its own loop, run directory and, when the run allows parallel
// children, its own sandbox session.
func (l *loop) runDelegation(ctx context.Context, d *delegation) toolResult {
	sess, release, err := l.childSession(ctx, d.profile)
	if err != nil {
		return errorf("delegate_task: child sandbox session: %v", err)
	}
	defer release()
	system := childSystemPrompt(l, d.tools, d.schemaText)
	maxOut := l.limits.MaxOutputTokens - l.st.Usage.OutputTokens
	crd, err := l.rd.child(d.rel)
	if err != nil {
		return errorf("delegate_task: child run directory: %v", err)
	}
	child, err := l.rt.newLoop(loopSpec{
		runDir: filepath.Join(l.rd.dir, d.rel), system: system, tools: d.tools,
		limits:  Limits{MaxTurns: l.rt.o.ChildMaxTurns, MaxOutputTokens: maxOut, MaxTokensPerCall: l.limits.MaxTokensPerCall, WallTime: l.limits.WallTime},
		workDir: l.workDir, env: l.env, depth: l.depth + 1, prompt: d.goal,
	}, l.client, l.model, sess, l.childEmit(), l.skills, l.guard, l.rd.redact, crd)
	if err != nil {
		return errorf("delegate_task: starting the child: %v", err)
	}
	defer child.close()
	child.pool = l.turnPool
	res := child.run(ctx)
	out := DelegateResult{Child: d.rel, Profile: d.profile}
	if d.sch != nil && res.stop == runtime.StopCompleted {
		var fatal *toolResult
		res, out.StructuredReturn, fatal = child.structuredReturn(ctx, res, d)
		if fatal != nil {
			return *fatal
		}
	}
	out.StopReason, out.Turns = res.stop, child.st.Turns
	if d.sch == nil || out.StructuredReturn == nil {
		out.Summary = sanitize(res.final, MaxSummaryBytes)
	}
	isErr := res.stop != runtime.StopCompleted || (out.StructuredReturn != nil && !out.StructuredReturn.Valid)
	if res.err != nil {
		out.Error = sanitize(res.err.Error(), 512)
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return toolResult{text: string(b), isError: isErr}
}

// structuredReturn validates the child's final text against the return
// schema, re-asking up to MaxReturnCorrections times. A valid value is
// kept raw in the child's run directory (ReturnFile) and shown to the
// parent through opaqueView.
func (c *loop) structuredReturn(ctx context.Context, res result, d *delegation) (result, *StructuredReturn, *toolResult) {
	for i := 0; ; i++ {
		val, verr := parseReturn(res.final, d.sch)
		if verr == nil {
			if err := c.rd.writeJSON(ReturnFile, val); err != nil {
				r := errorf("delegate_task: keeping the raw return: %v", err)
				return res, nil, &r
			}
			return res, &StructuredReturn{Valid: true, Value: opaqueView(d.schemaDoc, val), Raw: filepath.ToSlash(filepath.Join(d.rel, ReturnFile))}, nil
		}
		if i >= MaxReturnCorrections || ctx.Err() != nil {
			return res, &StructuredReturn{Valid: false, Errors: sanitize(parentErrors(verr, d.schemaDoc), MaxSummaryBytes)}, nil
		}
		fix := model.Message{Role: model.RoleUser, Content: []model.Block{model.TextBlock(
			"Your return value is not valid: " + verr.Error() + "\nReply with only the corrected JSON value, nothing else.")}}
		if err := c.addMessage(fix, Record{Turn: c.st.Turns}); err != nil {
			r := errorf("delegate_task: %v", err)
			return res, nil, &r
		}
		res = c.run(ctx)
		if res.stop != runtime.StopCompleted {
			return res, nil, nil
		}
	}
}

func childSystemPrompt(l *loop, tools []string, schemaText []byte) string {
	var b strings.Builder
	b.WriteString("You are a focused sub-agent started by another agent to do one task. You have a fresh context: everything you need is in the task below and in the sandbox.\n")
	if contains(tools, ToolReadFile) || contains(tools, ToolBash) {
		fmt.Fprintf(&b, "Working directory (sandbox): %s\n", l.workDir)
	} else {
		b.WriteString("You have no access to the workspace.\n")
	}
	fmt.Fprintf(&b, "Tools: %s\n", strings.Join(tools, ", "))
	if l.skills != nil && len(l.skills.Skills) > 0 && contains(tools, ToolReadSkillResource) {
		b.WriteString(skillsSection(l.skills))
	}
	if schemaText != nil {
		fmt.Fprintf(&b, "\nWhen you are done, reply with ONLY a single JSON value (no prose, no code fence) that satisfies this JSON Schema:\n%s\n", schemaText)
	} else {
		b.WriteString("\nWhen you are done, reply with a short factual summary of what you found or changed.\n")
	}
	return b.String()
}

// parseReturn extracts the child's JSON value (a ```json fence is
// tolerated) and validates it.
func parseReturn(text string, sch *schemacheck.Schema) (any, error) {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "```") {
		t = strings.TrimPrefix(t, "```json")
		t = strings.TrimPrefix(t, "```")
		t = strings.TrimSuffix(strings.TrimSpace(t), "```")
	}
	if len(t) > MaxReturnBytes {
		return nil, &returnError{what: fmt.Sprintf("return value larger than %d bytes", MaxReturnBytes)}
	}
	v, err := schemacheck.Decode([]byte(t))
	if err != nil {
		return nil, &returnError{what: "not a JSON value", detail: err.Error()}
	}
	if probs := sch.Validate(v); probs != nil {
		return nil, &returnError{probs: probs}
	}
	// The value handed on keeps its numbers as written (the validator
	// reads them as float64).
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var exact any
	if err := dec.Decode(&exact); err != nil {
		return nil, &returnError{what: "not a JSON value", detail: err.Error()}
	}
	return exact, nil
}

// compileSchema compiles one self-contained JSON Schema document (no $ref
// leaves it: nothing is loaded from disk or the network).
func compileSchema(name string, data []byte) (*schemacheck.Schema, error) {
	return schemacheck.Compile(name, data)
}

// schemaError joins the problems, one "at /path: reason" each.
func schemaError(probs []schemacheck.Problem) error {
	lines := make([]string, len(probs))
	for i, p := range probs {
		lines[i] = fmt.Sprintf("at %s: %s", p.Location(), p.Reason)
	}
	return errors.New(strings.Join(lines, "; "))
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]`)

// sanitize makes child text safe to hand to the parent model: ANSI escapes,
// control characters (but newline and tab) and invisible or bidi Unicode
// are removed; the result is cut to max bytes.
func sanitize(s string, max int) string {
	s = ansiRE.ReplaceAllString(s, "")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return -1
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C,
			r >= 0x200B && r <= 0x200D, r == 0x2060, r == 0xFEFF, r == 0x00AD, r >= 0xE0000 && r <= 0xE007F:
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > max {
		s = cutRunes(s, max-len("…[cut]"), true) + "…[cut]"
	}
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
