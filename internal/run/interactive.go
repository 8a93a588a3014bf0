package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/workspace"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// Agent is what ExecOptions.Interactive gets once the sandbox is
// provisioned, laid out and scanned and the runtime bootstrapped: it runs
// the agent as often as it likes (package chat: once per user message),
// each time from a copy of Input with its own Prompt and RunDir. There is
// no result validation, download or post_script.
type Agent struct {
	// Runtime is the bootstrapped runtime, Session the sandbox.
	Runtime runtime.Runtime
	Session sandbox.Session
	// Input is the template of every RunInput: agent, model, working
	// directory, sandbox environment, the plan's runtime options (no result
	// schema), the run's event log (events.jsonl) and Timeout, the
	// harness's timeout_minutes, which bounds each call.
	Input runtime.RunInput
	// RunDir is the run's own directory (report.json, events.jsonl).
	RunDir string

	x  *execution
	mu sync.Mutex
	// sm guards suspended (suspend.go): the snapshot of a suspended
	// sandbox, nil while it is up.
	sm        sync.Mutex
	suspended *workspace.Ref
}

// Count adds an outcome to the run's report (turns, tool calls, tokens).
func (a *Agent) Count(o *runtime.Outcome) {
	if o == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.x.count(o)
}

// CheckImage resolves an image path (relative to the caller's working
// directory) as `run --image` does (runtime.ImageChecker: the native
// runtime takes a png, jpeg, gif or webp regular file of at most 5 MiB)
// inside the target repository. The error wraps ErrImage.
func (a *Agent) CheckImage(img string) (string, error) {
	p := a.x.plan
	if p.TargetRepo == "" {
		return "", fmt.Errorf("%w: images must lie inside the target repository, and there is none", ErrImage)
	}
	repo, err := filepath.EvalSymlinks(p.TargetRepo)
	if err != nil {
		return "", fmt.Errorf("%w: target repository %s: %v", ErrImage, p.TargetRepo, err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrImage, err)
	}
	ic, ok := a.x.rt.(runtime.ImageChecker)
	if !ok {
		return "", fmt.Errorf("%w: the %s runtime takes no images", ErrImage, p.Runtime)
	}
	real, err := ic.CheckImage(img, cwd, repo, p.ExcludeFromRepo)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrImage, err)
	}
	return real, nil
}

// interactive hands the provisioned sandbox to ExecOptions.Interactive.
func (x *execution) interactive(ctx context.Context) error {
	p := x.plan
	a := &Agent{Runtime: x.rt, Session: x.sess, RunDir: x.dir, x: x, Input: runtime.RunInput{
		AgentName: p.AgentName, Model: p.Model, Iteration: 1, WorkDir: p.RepoDir(), Env: x.agentEnv(),
		Options: p.RunOptions(), Events: x.onEvent, Timeout: p.WallTime,
	}}
	if a.Input.Options == nil {
		a.Input.Options = map[string]string{}
	}
	return x.o.Interactive(ctx, a)
}
