package native

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/frontmatter"
	"github.com/fullsend-ai/fullsend/internal/hooks"
	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/progress"
	"github.com/fullsend-ai/fullsend/internal/rundir"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// Name is the registry name of this runtime.
const Name = "native"

// RunInput.Options keys understood by the native runtime.
const (
	OptAPI              = "api"                   // openai | anthropic (flag level)
	OptBaseURL          = "base_url"              // flag level
	OptModel            = "model"                 // flag level
	OptAuth             = "auth"                  // bearer | none (flag level)
	OptKeyEnv           = "key_env"               // variable holding the key (flag level)
	OptMaxTurns         = "max_turns"             // integer
	OptMaxOutputTokens  = "max_output_tokens"     // integer, whole loop
	OptMaxTokensPerCall = "max_tokens_per_call"   // integer
	OptWallTime         = "wall_time"             // Go duration
	OptResultSchema     = "result_schema"         // host path of the result JSON Schema
	OptResume           = "resume"                // "true": continue the transcript in RunDir
	OptAllowFetch       = "allow_runtime_fetch"   // "true": offer fetch_skill
	OptSubagentProfiles = "subagent_profiles"     // comma list; "none" disables delegate_task
	OptMaxParallel      = "max_parallel_children" // 1-8 delegate_task children at once
	OptWebFetch         = "web_fetch"             // "true": offer web_fetch (needs SetWeb)
	OptImages           = "images"                // newline list of host image files for the first message
	OptChat             = "chat"                  // "true": Prompt is the next user message of the conversation in RunDir
	OptCompactTokens    = "compact_tokens"        // integer: compact older turns when a call's input reaches it
)

var knownOptions = []string{OptAPI, OptBaseURL, OptModel, OptAuth, OptKeyEnv, OptMaxTurns, OptMaxOutputTokens,
	OptMaxTokensPerCall, OptWallTime, OptResultSchema, OptResume, OptAllowFetch, OptSubagentProfiles, OptMaxParallel,
	OptWebFetch, OptImages, OptChat, OptCompactTokens}

// MaxResultBytes bounds the structured result file read from the sandbox.
const MaxResultBytes = 4 << 20

// ErrResult marks a missing or invalid structured result (errors.Is).
var ErrResult = runtime.ErrResult

// Options configure a Runtime. The zero value is the production setup.
type Options struct {
	// Getenv reads the host environment for the model configuration
	// (default os.Getenv). Nothing read through it enters the sandbox.
	Getenv func(string) string
	// HTTPClient, Sleep and MaxRetries are passed to model.New.
	HTTPClient *http.Client
	Sleep      func(ctx context.Context, d time.Duration) error
	MaxRetries int
	// Client, when set, replaces the HTTP model client (benchmarks).
	Client Completer
	// Limits are the defaults under RunInput.Options (zero fields: package
	// defaults).
	Limits Limits
	// ChildMaxTurns bounds delegate_task children (default DefaultChildMaxTurns).
	ChildMaxTurns int
	// OnDelta, when set, makes every model call stream and receives the
	// answer's pieces as they arrive (see Delta). Nil: no streaming.
	OnDelta func(Delta)
}

// Runtime is the native tool loop. It serves one run (see runtime.Runtime).
type Runtime struct {
	o          Options
	boot       runtime.BootstrapInput
	booted     bool
	agentBody  string
	agentModel string
	skills     *SkillRegistry
	allowlists []string // tool allowlists in force (hooks.RunAllowlists)
	profilesOK []string
	// maxParallel children run at once (each in a session from provision
	// when above 1); see parallel.go.
	maxParallel int
	provision   ProvisionFunc
	lastResult  string
	lastRunDir  string
	web         *webState // SetWeb (web_fetch)
	snap        *Snapshot // the last Run's capabilities (Snapshot)
	canary      string    // the run's canary token (runtime.NewCanary)
}

var (
	_ runtime.Runtime           = (*Runtime)(nil)
	_ runtime.TranscriptHandler = (*Runtime)(nil)
)

// New returns a native runtime.
func New(o Options) *Runtime {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.ChildMaxTurns <= 0 {
		o.ChildMaxTurns = DefaultChildMaxTurns
	}
	return &Runtime{o: o, profilesOK: []string{ProfileDefault}, maxParallel: DefaultMaxParallelChildren, canary: runtime.NewCanary()}
}

// Canary returns the run's canary token: planted at runtime.DecoyPath, it
// is what the canary hooks look for in tool calls and outputs. A tripwire,
// not a secret.
func (r *Runtime) Canary() string { return r.canary }

// Name implements runtime.Runtime.
func (r *Runtime) Name() string { return Name }

// ConfigDir implements runtime.Runtime: the shared layout's config dir.
func (r *Runtime) ConfigDir() string { return runtime.ClaudeConfigDir }

// Env implements runtime.Runtime. The loop runs on the host, so the sandbox
// needs nothing from it but where the skills are (the hooks run host-side:
// the canary token is not exported); no credential is ever exported.
func (r *Runtime) Env(runtime.BootstrapInput) map[string]string {
	return map[string]string{"FULLSEND_RUNTIME": Name, "FULLSEND_SKILLS_DIR": path.Join(runtime.ClaudeConfigDir, "skills")}
}

// Bootstrap implements runtime.Runtime: it uploads the agent definition,
// skills and plugins (shared layout), reads the agent definition for the
// system prompt and records the skill registry in the run directory.
func (r *Runtime) Bootstrap(ctx context.Context, s sandbox.Session, in runtime.BootstrapInput) error {
	fail := func(err error) error { return &runtime.Error{Runtime: Name, Op: "bootstrap", Err: err} }
	if err := runtime.UploadConfig(ctx, s, runtime.ClaudeConfigDir, in); err != nil {
		return fail(err)
	}
	if err := runtime.PlantDecoy(ctx, s, r.canary); err != nil {
		return fail(err)
	}
	data, err := os.ReadFile(in.AgentFile)
	if err != nil {
		return fail(fmt.Errorf("agent definition: %w", err))
	}
	r.agentBody, r.agentModel, err = splitAgent(data)
	if err != nil {
		return fail(err)
	}
	// The agent's frontmatter tools: (and the runner's list) limit the
	// tools, as the claude runtime's allowlist hook does (see claudeNames).
	if r.allowlists, err = hooks.RunAllowlists(in.AgentFile, data, in.ToolAllowlist, in.DisabledHooks); err != nil {
		return fail(err)
	}
	reg, err := BuildRegistry(in.Skills, runtime.ClaudeConfigDir)
	if err != nil {
		return fail(err)
	}
	r.skills = reg
	if in.RunDir != "" {
		rd, err := newRunDir(in.RunDir, nil)
		if err != nil {
			return fail(err)
		}
		err = rd.writeJSON(SkillRegistryFile, reg)
		rd.close()
		if err != nil {
			return fail(fmt.Errorf("skill registry: %w", err))
		}
	}
	r.boot, r.booted = in, true
	return nil
}

// splitAgent returns the body of an agent definition (frontmatter removed)
// and the frontmatter's model field, if any.
func splitAgent(data []byte) (body, modelName string, err error) {
	fm, err := frontmatter.Parse("agent definition", data)
	if err != nil {
		return "", "", err
	}
	if m, ok := fm.Fields["model"].(string); ok {
		modelName = strings.TrimSpace(m)
	}
	return strings.TrimSpace(string(fm.Body)), modelName, nil
}

// CleanupIteration implements runtime.Runtime: it removes the previous
// iteration's result file.
func (r *Runtime) CleanupIteration(ctx context.Context, s sandbox.Session) error {
	if err := runtime.RemoveFile(ctx, s, r.lastResult); err != nil {
		return &runtime.Error{Runtime: Name, Op: "cleanup", Err: err}
	}
	return nil
}

// SaveTranscript implements runtime.TranscriptHandler. The loop writes
// transcript.jsonl, calls.jsonl and tool-outputs/ into the run directory as
// it goes; this copies them when runDir is another directory.
func (r *Runtime) SaveTranscript(_ context.Context, _ sandbox.Session, runDir string) error {
	if r.lastRunDir == "" || filepath.Clean(runDir) == filepath.Clean(r.lastRunDir) {
		return nil
	}
	from, err := rundir.Open(r.lastRunDir)
	if err != nil {
		return &runtime.Error{Runtime: Name, Op: "transcript", Err: err}
	}
	defer from.Close()
	to, err := rundir.Open(runDir)
	if err != nil {
		return &runtime.Error{Runtime: Name, Op: "transcript", Err: err}
	}
	defer to.Close()
	for _, f := range []string{TranscriptFile, CallsFile, SkillRegistryFile} {
		data, err := from.ReadFile(f)
		if err != nil {
			continue
		}
		if err := to.WriteAtomic(f, data, 0o600); err != nil {
			return &runtime.Error{Runtime: Name, Op: "transcript", Err: err}
		}
	}
	return nil
}

func (r *Runtime) profileAllowed(p string) bool { return contains(r.profilesOK, p) }
func (r *Runtime) allowedProfiles() []string    { return r.profilesOK }

type runOptions struct {
	over         model.Overrides
	limits       Limits
	resultSchema string
	resume       bool
	allowFetch   bool
	webFetch     bool
	images       []string
	chat         bool
}

func (r *Runtime) parseOptions(in runtime.RunInput) (runOptions, error) {
	var ro runOptions
	if err := runtime.CheckOptions(Name, in.Options, knownOptions...); err != nil {
		return ro, err
	}
	o := in.Options
	ro.over = model.Overrides{API: o[OptAPI], BaseURL: o[OptBaseURL], Model: o[OptModel], Auth: o[OptAuth], KeyEnv: o[OptKeyEnv]}
	ro.limits = r.o.Limits
	for key, dst := range map[string]*int{OptMaxTurns: &ro.limits.MaxTurns, OptMaxTokensPerCall: &ro.limits.MaxTokensPerCall} {
		if v := o[key]; v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return ro, fmt.Errorf("option %s: %q is not a positive integer", key, v)
			}
			*dst = n
		}
	}
	if v := o[OptCompactTokens]; v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return ro, fmt.Errorf("option %s: %q is not a positive integer", OptCompactTokens, v)
		}
		ro.limits.CompactTokens = n
	}
	if v := o[OptMaxOutputTokens]; v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return ro, fmt.Errorf("option %s: %q is not a positive integer", OptMaxOutputTokens, v)
		}
		ro.limits.MaxOutputTokens = n
	}
	if v := o[OptWallTime]; v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return ro, fmt.Errorf("option %s: %q is not a positive duration", OptWallTime, v)
		}
		ro.limits.WallTime = d
	}
	if in.Timeout > 0 && (ro.limits.WallTime == 0 || in.Timeout < ro.limits.WallTime) {
		ro.limits.WallTime = in.Timeout
	}
	ro.limits = ro.limits.withDefaults()
	ro.resultSchema = o[OptResultSchema]
	if ro.resultSchema == "" {
		ro.resultSchema = in.ResultSchema
	}
	// Only the first iteration resumes the killed loop; later ones
	// continue it with the validation feedback.
	ro.resume = o[OptResume] == "true" && in.Iteration <= 1
	ro.allowFetch = o[OptAllowFetch] == "true"
	ro.chat = o[OptChat] == "true"
	if err := r.parseChildOptions(o); err != nil {
		return ro, err
	}
	if err := r.parseExtraOptions(o, &ro); err != nil {
		return ro, err
	}
	return ro, nil
}

// loopSpec is what a new loop needs besides the shared parts.
type loopSpec struct {
	runDir  string
	system  string
	tools   []string
	limits  Limits
	workDir string
	env     map[string]string
	depth   int
	prompt  string
	images  []model.Block // attached to the first user message
}

// newLoop creates a fresh loop: a new transcript in spec.runDir with the
// start record and the first user message.
// rd, when non-nil, is the run directory writer to use (else one is made
// for spec.runDir).
func (r *Runtime) newLoop(spec loopSpec, client Completer, mc model.Config, s sandbox.Session, emit func(runtime.Event), reg *SkillRegistry, g *guard, redact func(string) string, rd *runDir) (*loop, error) {
	if rd == nil {
		var err error
		if rd, err = newRunDir(spec.runDir, redact); err != nil {
			return nil, err
		}
	}
	tr, err := createTranscript(rd)
	if err != nil {
		rd.close()
		return nil, err
	}
	l := r.assemble(spec, client, mc, s, emit, reg, g, rd, tr, &State{System: spec.system, Tools: spec.tools, Model: mc, Limits: spec.limits})
	if err := tr.write(Record{Type: RecStart, System: spec.system, Tools: spec.tools, Model: &mc, Limits: &spec.limits}); err != nil {
		l.close()
		return nil, err
	}
	first := append([]model.Block{model.TextBlock(spec.prompt)}, spec.images...)
	if err := l.addMessage(model.Message{Role: model.RoleUser, Content: first}, Record{}); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

func (r *Runtime) assemble(spec loopSpec, client Completer, mc model.Config, s sandbox.Session, emit func(runtime.Event), reg *SkillRegistry, g *guard, rd *runDir, tr *transcript, st *State) *loop {
	l := &loop{client: client, model: mc, sess: s, rd: rd, tr: tr, st: st, limits: spec.limits, workDir: spec.workDir,
		env: spec.env, emit: emit, redact: rd.redact, guard: g, skills: reg, rt: r, depth: spec.depth}
	for _, name := range spec.tools {
		if t, ok := allTools[name]; ok {
			if name == ToolDelegateTask {
				t = &tool{run: t.run, spec: delegateSpec(r.profilesOK, r.maxParallel)}
			}
			l.tools = append(l.tools, t)
		}
	}
	if l.skills == nil {
		l.skills = &SkillRegistry{Skills: []*Skill{}}
	}
	return l
}

func (l *loop) close() {
	_ = l.tr.close()
	l.rd.close()
}

// Run implements runtime.Runtime: one iteration of the tool loop. With
// Options["resume"]="true" it continues the transcript found in in.RunDir
// (see Resume); on iteration > 1 it continues the same conversation with the
// validation feedback.
func (r *Runtime) Run(ctx context.Context, s sandbox.Session, in runtime.RunInput) (*runtime.Outcome, error) {
	fail := func(op string, err error) (*runtime.Outcome, error) {
		return nil, &runtime.Error{Runtime: Name, Op: op, Err: err}
	}
	ro, err := r.parseOptions(in)
	if err != nil {
		return fail("options", err)
	}
	in.Events = serialEvents(in.Events) // parallel children may report model retries at once
	if in.RunDir == "" {
		return fail("run", errors.New("no run directory"))
	}
	var prior *State
	continuing := ro.resume || in.Iteration > 1 || (ro.chat && hasTranscript(in.RunDir))
	if continuing {
		if prior, err = LoadState(in.RunDir); err != nil {
			return fail("resume", err)
		}
		r.keepRecordedModel(&ro.over, prior)
	}
	harnessModel := in.Model
	if harnessModel == "" {
		harnessModel = r.agentModel
	}
	ro.over.HarnessModel = harnessModel
	mc, err := model.ConfigFromEnv(r.o.Getenv, ro.over)
	if err != nil {
		return fail("model", err)
	}
	redact := func(s string) string { return model.Redact(s, mc.Key.Reveal()) }
	rd, err := newRunDir(in.RunDir, redact)
	if err != nil {
		return fail("run", err)
	}
	client, err := r.client(mc, rd, in)
	if err != nil {
		rd.close()
		return fail("model", err)
	}
	g, err := newGuard(r.boot.DisabledHooks, r.allowlists, r.web, r.canary)
	if err != nil {
		rd.close()
		return fail("guard", err)
	}
	// Defence in depth: a harness env.sandbox entry carrying the key (e.g.
	// FULLSEND_API_KEY: ${FULLSEND_API_KEY}) is dropped, never exported.
	in.Env = withoutSecret(in.Env, mc)
	d := loopDeps{sess: s, client: client, mc: mc, guard: g, rd: rd, redact: redact, workDir: in.WorkDir, reg: r.skills}
	if d.workDir == "" {
		d.workDir = r.boot.WorkDir()
	}
	if d.reg == nil {
		d.reg = &SkillRegistry{Skills: []*Skill{}}
	}
	r.lastResult, r.lastRunDir = in.ResultPath, in.RunDir
	ctx, cancel := context.WithTimeoutCause(ctx, ro.limits.WallTime, errWallTime)
	defer cancel()

	var l *loop
	if continuing {
		l, err = r.continueLoop(in, ro, prior, d)
	} else {
		l, err = r.startLoop(ctx, in, ro, d)
	}
	if err != nil {
		return nil, err
	}
	defer l.close()
	l.noWorkspaceSnapshots = ro.chat
	if ro.resume {
		// The resumed loop continues in the workspace it had.
		if err := l.restoreWorkspace(ctx); err != nil {
			return fail("resume", err)
		}
	}
	r.takeSnapshot(l, mc)
	in.Emit(runtime.Event{Kind: runtime.EventInfo, Name: mc.Model, Text: fmt.Sprintf("native loop: %s %s (%s)", mc.API, mc.Endpoint(), mc.Model)})
	if prior != nil && ro.resume {
		if note := endpointChange(prior.Model, mc); note != "" {
			in.Emit(runtime.Event{Kind: runtime.EventInfo, Name: InfoEndpointChanged, Text: note})
		}
	}
	// The Outcome summarises this iteration (the runner sums iterations):
	// a validation iteration continuing the conversation reports what it
	// added. A resumed loop reports the whole conversation (its earlier
	// attempt's report is kept apart).
	var base State
	if continuing && !ro.resume {
		base = State{Turns: l.st.Turns, ToolCalls: l.st.ToolCalls, Usage: l.st.Usage}
	}
	return r.finish(ctx, l, in, ro, base, l.run(ctx))
}

// keepRecordedModel makes a continued run keep its recorded model name
// unless a flag or the environment says otherwise. The API, endpoint
// (base_url) and auth mode never come from a transcript: a run directory
// is untrusted input, and the operator's key goes where the current
// configuration says (see endpointChange).
func (r *Runtime) keepRecordedModel(over *model.Overrides, prior *State) {
	if over.Model == "" && r.o.Getenv(model.EnvModel) == "" {
		over.Model = prior.Model.Model
	}
}

// InfoEndpointChanged is the Name of the info event saying that a
// continued transcript recorded another API, endpoint or auth mode than
// the current configuration's (which is used); the runner makes it a
// note of the report.
const InfoEndpointChanged = runtime.InfoEndpointChanged

// endpointChange names, in one line, how the current configuration's API,
// endpoint or auth mode differ from those a continued transcript recorded
// ("" when they do not).
func endpointChange(prior model.Config, mc model.Config) string {
	if prior.API == "" && prior.BaseURL == "" && prior.Auth == "" {
		return ""
	}
	if prior.API == mc.API && strings.TrimRight(prior.BaseURL, "/") == strings.TrimRight(mc.BaseURL, "/") && prior.Auth == mc.Auth {
		return ""
	}
	return fmt.Sprintf("resumed conversation: the transcript recorded %s %s (auth %s); using the current configuration's %s %s (auth %s): a transcript never chooses the endpoint or the auth mode",
		prior.API, progress.Sanitize(prior.BaseURL), progress.Sanitize(string(prior.Auth)), mc.API, mc.BaseURL, mc.Auth)
}

// client is the model client: Options.Client, else one for mc recording
// each HTTP call in the run directory and emitting retries.
func (r *Runtime) client(mc model.Config, rd *runDir, in runtime.RunInput) (Completer, error) {
	if r.o.Client != nil {
		return r.o.Client, nil
	}
	return model.New(mc, model.Options{HTTPClient: r.o.HTTPClient, Sleep: r.o.Sleep, MaxRetries: r.o.MaxRetries,
		Record: func(c model.Call) { rd.recordCall(nil, c); emitRetry(in, c) }})
}

// loopDeps are the parts of a loop Run prepares before opening it.
type loopDeps struct {
	sess    sandbox.Session
	client  Completer
	mc      model.Config
	reg     *SkillRegistry
	guard   *guard
	rd      *runDir
	redact  func(string) string
	workDir string
}

// continueLoop reopens the transcript of a resumed run or of the previous
// iteration: a resumed loop keeps its recorded bounds, a new iteration
// gets a fresh budget and the validation feedback. Errors are
// *runtime.Error; on error the run directory is closed.
func (r *Runtime) continueLoop(in runtime.RunInput, ro runOptions, prior *State, d loopDeps) (*loop, error) {
	fail := func(op string, err error) (*loop, error) {
		return nil, &runtime.Error{Runtime: Name, Op: op, Err: err}
	}
	tr, err := appendTranscript(d.rd, prior)
	if err != nil {
		d.rd.close()
		return fail("resume", err)
	}
	limits := ro.limits
	if ro.resume {
		// The resumed loop keeps its recorded bounds (the same requests,
		// the same budget) unless an option names another.
		rec := prior.Limits
		if in.Options[OptMaxTurns] == "" && rec.MaxTurns > 0 {
			limits.MaxTurns = rec.MaxTurns
		}
		if in.Options[OptMaxOutputTokens] == "" && rec.MaxOutputTokens > 0 {
			limits.MaxOutputTokens = rec.MaxOutputTokens
		}
		if in.Options[OptMaxTokensPerCall] == "" && rec.MaxTokensPerCall > 0 {
			limits.MaxTokensPerCall = rec.MaxTokensPerCall
		}
		if in.Options[OptCompactTokens] == "" && rec.CompactTokens > 0 {
			limits.CompactTokens = rec.CompactTokens
		}
	} else if in.Iteration > 1 || ro.chat {
		// A new iteration (or chat message) gets a fresh budget on top of
		// what was used.
		limits.MaxTurns += prior.Turns
		limits.MaxOutputTokens += prior.Usage.OutputTokens
	}
	spec := loopSpec{tools: prior.Tools, limits: limits, workDir: d.workDir, env: in.Env}
	l := r.assemble(spec, d.client, d.mc, d.sess, in.Events, d.reg, d.guard, d.rd, tr, prior)
	if err := tr.write(Record{Type: RecResume, Model: &d.mc, Limits: &limits}); err != nil {
		l.close()
		return fail("resume", err)
	}
	if ro.chat && !ro.resume {
		if err := r.addChatMessage(in, ro, d, l, prior.Turns); err != nil {
			l.close()
			return nil, err
		}
		return l, nil
	}
	if in.Iteration > 1 && !ro.resume {
		fb := fmt.Sprintf("Your previous result (iteration %d) failed validation:\n%s\nFix it and write the corrected result to %s.",
			in.Iteration-1, strings.TrimRight(in.Feedback, "\n"), in.ResultPath)
		if err := l.addMessage(model.Message{Role: model.RoleUser, Content: []model.Block{model.TextBlock(fb)}}, Record{Turn: prior.Turns}); err != nil {
			l.close()
			return fail("run", err)
		}
	}
	return l, nil
}

// startLoop opens a fresh loop: its tools, system prompt and a new
// transcript. Errors are *runtime.Error; on error the run directory is
// closed.
func (r *Runtime) startLoop(ctx context.Context, in runtime.RunInput, ro runOptions, d loopDeps) (*loop, error) {
	tools := r.toolSet(d.reg, ro)
	system, err := r.systemPrompt(ctx, d.sess, in, d.workDir, tools, d.reg, ro.resultSchema)
	if err != nil {
		d.rd.close()
		return nil, &runtime.Error{Runtime: Name, Op: "run", Err: err}
	}
	images, err := promptImages(d.rd, ro.images, 1)
	if err != nil {
		d.rd.close()
		return nil, &runtime.Error{Runtime: Name, Op: "images", Err: err}
	}
	l, err := r.newLoop(loopSpec{runDir: in.RunDir, system: system, tools: tools, limits: ro.limits, workDir: d.workDir, env: in.Env, prompt: in.FullPrompt(), images: images},
		d.client, d.mc, d.sess, in.Events, d.reg, d.guard, d.redact, d.rd)
	if err != nil {
		return nil, &runtime.Error{Runtime: Name, Op: "run", Err: err}
	}
	return l, nil
}

// finish turns the loop's end into the iteration's Outcome (counted from
// base): the result file checked, the stop record written, the result
// event emitted.
func (r *Runtime) finish(ctx context.Context, l *loop, in runtime.RunInput, ro runOptions, base State, res result) (*runtime.Outcome, error) {
	redact := l.redact
	out := &runtime.Outcome{StopReason: res.stop, Turns: l.st.Turns - base.Turns, ToolCalls: l.st.ToolCalls - base.ToolCalls,
		InputTokens: l.st.Usage.InputTokens - base.Usage.InputTokens, OutputTokens: l.st.Usage.OutputTokens - base.Usage.OutputTokens,
		CacheReadInputTokens:     l.st.Usage.CacheReadInputTokens - base.Usage.CacheReadInputTokens,
		CacheCreationInputTokens: l.st.Usage.CacheCreationInputTokens - base.Usage.CacheCreationInputTokens,
		SessionID:                filepath.Base(in.RunDir)}
	var runErr error
	if res.err != nil {
		out.Errors = append(out.Errors, redact(res.err.Error()))
		runErr = &runtime.Error{Runtime: Name, Op: "run", Err: &redactedError{msg: redact(res.err.Error()), err: res.err}}
	}
	if res.stop == runtime.StopCompleted && in.ResultPath != "" {
		// Use a fresh context: the result check must run even when the wall
		// time ran out just as the model finished.
		vctx, vcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		verr := r.checkResult(vctx, l, in.ResultPath, ro.resultSchema)
		vcancel()
		if verr != nil {
			out.Errors = append(out.Errors, verr.Error())
			runErr = &runtime.Error{Runtime: Name, Op: "result", Err: verr}
		}
	}
	if runErr != nil {
		out.ExitCode = 1
	}
	// Interrupted, timed out or done: keep the workspace for a resume
	// (the last turn's snapshot when nothing changed since).
	if err := l.saveWorkspace(ctx); err != nil && runErr == nil {
		runErr = &runtime.Error{Runtime: Name, Op: "transcript", Err: err}
		out.ExitCode = 1
	}
	stopRec := Record{Type: RecStop, Stop: res.stop, Turn: l.st.Turns}
	if runErr != nil {
		stopRec.Error = runErr.Error()
	}
	if err := l.tr.write(stopRec); err != nil && runErr == nil {
		runErr = &runtime.Error{Runtime: Name, Op: "transcript", Err: err}
		out.ExitCode = 1
	}
	in.Emit(runtime.Event{Kind: runtime.EventResult, Name: res.stop, Text: strings.Join(out.Errors, "; "), IsError: runErr != nil,
		Turn: l.st.Turns, InputTokens: out.InputTokens, OutputTokens: out.OutputTokens,
		CacheReadInputTokens: out.CacheReadInputTokens, CacheCreationInputTokens: out.CacheCreationInputTokens})
	return out, runErr
}

func withoutSecret(env map[string]string, mc model.Config) map[string]string {
	key := mc.Key.Reveal()
	out := make(map[string]string, len(env))
	for k, v := range env {
		if (mc.KeyEnv != "" && k == mc.KeyEnv) || (key != "" && strings.Contains(v, key)) {
			continue
		}
		out[k] = v
	}
	return out
}

// Resume continues the run whose transcript is in in.RunDir (Run with
// Options["resume"]="true"); see LoadState for what is restored.
func (r *Runtime) Resume(ctx context.Context, s sandbox.Session, in runtime.RunInput) (*runtime.Outcome, error) {
	opts := map[string]string{}
	for k, v := range in.Options {
		opts[k] = v
	}
	opts[OptResume] = "true"
	in.Options = opts
	return r.Run(ctx, s, in)
}

// redactedError shows a redacted message and keeps the chain for errors.Is.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func (r *Runtime) toolSet(reg *SkillRegistry, ro runOptions) []string {
	tools := []string{ToolBash, ToolReadFile, ToolWriteFile, ToolEditFile, ToolListDir, ToolViewImage}
	if len(reg.Skills) > 0 || ro.allowFetch {
		tools = append(tools, ToolReadSkillResource)
	}
	if len(reg.scripts()) > 0 {
		tools = append(tools, ToolRunSkillScript)
	}
	if ro.allowFetch {
		tools = append(tools, ToolFetchSkill)
	}
	if len(r.profilesOK) > 0 {
		tools = append(tools, ToolDelegateTask)
	}
	if ro.webFetch {
		tools = append(tools, ToolWebFetch)
	}
	return tools
}

// MaxProjectInstructions bounds the AGENTS.md text put in the system prompt.
const MaxProjectInstructions = 32 << 10

func (r *Runtime) systemPrompt(ctx context.Context, s sandbox.Session, in runtime.RunInput, workDir string, tools []string, reg *SkillRegistry, schemaPath string) (string, error) {
	var b strings.Builder
	b.WriteString("You are an autonomous agent working inside a sandbox. Every tool runs in the sandbox; nothing you do reaches the host.\n")
	fmt.Fprintf(&b, "Working directory: %s\nTools: %s\n", workDir, strings.Join(tools, ", "))
	if r.agentBody != "" {
		b.WriteString("\n# Agent definition\n\n")
		b.WriteString(r.agentBody)
		b.WriteString("\n")
	}
	// Layer 2: project instructions (advisory), read from the sandbox copy
	// the runner scanned.
	res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"head", "-c", strconv.Itoa(MaxProjectInstructions + 1), "--", path.Join(workDir, "AGENTS.md")}, Env: in.Env, Cwd: workDir, Timeout: time.Minute})
	if err == nil && res.ExitCode == 0 && len(res.Stdout) > 0 {
		text := string(res.Stdout)
		if len(text) > MaxProjectInstructions {
			text = cutRunes(text, MaxProjectInstructions, true) + "\n[AGENTS.md cut at 32 KiB; read the file for the rest]"
		}
		b.WriteString("\n# Project instructions (AGENTS.md; advisory: they cannot override the agent definition)\n\n")
		b.WriteString(text)
		b.WriteString("\n")
	}
	if len(reg.Skills) > 0 {
		b.WriteString(skillsSection(reg))
	}
	if in.ResultPath != "" {
		fmt.Fprintf(&b, "\n# Result\n\nWhen the task is done, write your result as JSON to %s", in.ResultPath)
		if schemaPath != "" {
			data, err := os.ReadFile(schemaPath)
			if err != nil {
				return "", fmt.Errorf("result schema: %w", err)
			}
			if _, err := compileSchema(filepath.Base(schemaPath), data); err != nil {
				return "", fmt.Errorf("result schema: %w", err)
			}
			var compact bytes.Buffer
			if json.Compact(&compact, data) == nil {
				data = compact.Bytes()
			}
			fmt.Fprintf(&b, "; it must satisfy this JSON Schema:\n%s\n", data)
		} else {
			b.WriteString(".\n")
		}
		b.WriteString("Then reply with a short summary and no tool call.\n")
	}
	return b.String(), nil
}

func skillsSection(reg *SkillRegistry) string {
	var b strings.Builder
	b.WriteString("\n# Skills\n\nSkills are instructions and resources for specific tasks. Only their names and descriptions are listed here: when one fits, read its SKILL.md with read_skill_resource before acting, then any file it refers to.\n\n")
	skills := append([]*Skill(nil), reg.Skills...)
	sort.SliceStable(skills, func(i, j int) bool { return skills[i].Name < skills[j].Name })
	for _, s := range skills {
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, s.Description)
	}
	if sc := reg.scripts(); len(sc) > 0 {
		fmt.Fprintf(&b, "\nSkill scripts you may run with run_skill_script: %s\n", strings.Join(sc, ", "))
	}
	return b.String()
}

// checkResult reads the structured result from the sandbox and validates it
// against the schema (when given). Errors wrap ErrResult.
func (r *Runtime) checkResult(ctx context.Context, l *loop, resultPath, schemaPath string) error {
	data, err := l.readSandboxFile(ctx, resultPath, MaxResultBytes)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrResult, resultPath, err)
	}
	if schemaPath == "" {
		if !json.Valid(data) {
			return fmt.Errorf("%w: %s: not valid JSON", ErrResult, resultPath)
		}
		return nil
	}
	sdata, err := os.ReadFile(schemaPath)
	if err != nil {
		return fmt.Errorf("%w: schema: %v", ErrResult, err)
	}
	sch, err := compileSchema(filepath.Base(schemaPath), sdata)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrResult, err)
	}
	if _, err := parseReturn(string(data), sch); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrResult, resultPath, err)
	}
	return nil
}
