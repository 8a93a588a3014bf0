package native

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// Subagent profiles of delegate_task (the harness's
// native.subagent_profiles names the ones a run allows).
const (
	ProfileDefault  = "default"
	ProfileReadOnly = "read_only"
	ProfileWebFetch = "web_fetch"
)

// Bounds of parallel children (native.max_parallel_children).
const (
	DefaultMaxParallelChildren = 1
	MaxParallelChildren        = 8
	// childTeardown bounds terminating a child's sandbox session.
	childTeardown = 30 * time.Second
)

// ProvisionFunc provisions a fresh sandbox session like the run's own (same
// spec and network); the native runtime terminates it.
type ProvisionFunc = runtime.ProvisionFunc

// ChildSessioner is runtime.ChildSessioner.
type ChildSessioner = runtime.ChildSessioner

// SetChildSessions implements runtime.ChildSessioner. Without it, a run with
// max_parallel_children above 1 fails at its start.
func (r *Runtime) SetChildSessions(f ProvisionFunc) { r.provision = f }

// tokenPool is the output-token budget the children of one parent turn
// share. It is checked before each child model call (a call asks for at
// most what is left) and charged after it, under a mutex; children running
// at once can overrun it by at most one call each.
type tokenPool struct {
	mu   sync.Mutex
	left int64
}

func (p *tokenPool) remaining() int64 {
	if p == nil {
		return 1 << 62
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.left
}

func (p *tokenPool) charge(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.left -= n
	p.mu.Unlock()
}

// remainingTokens is what the loop may still spend: its own budget, and for
// a child the pool it shares with its siblings.
func (l *loop) remainingTokens() int64 {
	return min(l.limits.MaxOutputTokens-l.st.Usage.OutputTokens, l.pool.remaining())
}

// executeCalls runs the tool calls of one assistant turn and appends their
// results in call order. The delegate_task calls among them run first,
// concurrently, at most max_parallel_children at once (each in its own
// sandbox session when that is above 1); children are numbered by call
// order, so children/<k>/ and the transcript do not depend on timing. A
// child's failure is its call's error result; cancellation stops them all.
func (l *loop) executeCalls(ctx context.Context, calls []model.ToolCall) error {
	l.turnPool = &tokenPool{left: l.remainingTokens()}
	defer func() { l.turnPool, l.ready = nil, nil }()
	defer l.dropSnapshot()
	if err := l.runDelegations(ctx, calls); err != nil {
		return err
	}
	for _, tc := range calls {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := l.execute(ctx, tc); err != nil {
			return err
		}
	}
	return nil
}

// runDelegations runs ahead the delegate_task calls of a turn when more
// than one child may run at once; execute then records their results in
// call order (l.ready). A call the guard blocks or whose arguments are
// malformed is left to execute.
func (l *loop) runDelegations(ctx context.Context, calls []model.ToolCall) error {
	if l.rt.maxParallel <= 1 || l.depth > 0 || l.tool(ToolDelegateTask) == nil {
		return nil
	}
	type job struct {
		id string
		d  *delegation
	}
	var jobs []job
	l.ready = map[string]toolResult{}
	for _, tc := range calls {
		if tc.Name != ToolDelegateTask {
			continue
		}
		args, err := parseArgs(l.redact(tc.Arguments))
		if err != nil || l.guard.pre(ctx, tc.Name, args).Block {
			continue
		}
		d, bad := l.prepareDelegate(args)
		if bad != nil {
			l.ready[tc.ID] = *bad
			continue
		}
		jobs = append(jobs, job{tc.ID, d})
	}
	results := make([]toolResult, len(jobs))
	sem := make(chan struct{}, l.rt.maxParallel)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i] = errorf("delegate_task: %v", ctx.Err())
				return
			}
			defer func() { <-sem }()
			results[i] = l.runDelegation(ctx, j.d)
		}()
	}
	wg.Wait()
	for i, j := range jobs {
		l.ready[j.id] = results[i]
	}
	return ctx.Err()
}

// runTool runs t, or hands back the result of a child already run by
// runDelegations.
func (l *loop) runTool(ctx context.Context, t *tool, n int, id string, args map[string]any) toolResult {
	if out, ok := l.ready[id]; ok {
		return out
	}
	l.callID = id
	return t.run(ctx, l, n, args)
}

// childSession is the sandbox session a child runs in: the parent's when
// children run one at a time, else a fresh one provisioned for it (released
// after), holding a copy of the parent's workspace as it was when the
// turn's children started (none for the web_fetch profile, which has no
// workspace tools). A child's file changes in its own session are not
// copied back.
func (l *loop) childSession(ctx context.Context, profile string) (sandbox.Session, func(), error) {
	if l.rt.maxParallel <= 1 {
		return l.sess, func() {}, nil
	}
	if l.rt.provision == nil {
		return nil, nil, fmt.Errorf("no sandbox backend to provision child sessions")
	}
	var snap string
	if profile != ProfileWebFetch {
		var err error
		if snap, err = l.workspaceSnapshot(ctx); err != nil {
			return nil, nil, err
		}
	}
	s, err := l.rt.provision(ctx)
	if err != nil {
		return nil, nil, err
	}
	release := func() {
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), childTeardown)
		defer cancel()
		_ = s.Terminate(tctx)
	}
	if snap != "" {
		if err := s.Upload(ctx, snap, runtime.WorkspaceDir); err != nil {
			release()
			return nil, nil, fmt.Errorf("copying the workspace into the child session: %w", err)
		}
		return s, release, nil
	}
	// No workspace: an empty working directory, so that commands have one.
	res, err := s.Exec(ctx, sandbox.ExecRequest{Args: []string{"mkdir", "-p", "--", l.workDir}, Cwd: "/", Timeout: time.Minute})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("%s", firstLine(res.Stderr, "mkdir failed"))
	}
	if err != nil {
		release()
		return nil, nil, fmt.Errorf("creating the working directory in the child session: %w", err)
	}
	return s, release, nil
}

// workspaceSnapshot downloads the parent's workspace once per turn into a
// private host directory (removed when the turn's calls are done).
func (l *loop) workspaceSnapshot(ctx context.Context) (string, error) {
	l.snapMu.Lock()
	defer l.snapMu.Unlock()
	if l.snapshot != nil {
		return l.snapshot.dir, l.snapshot.err
	}
	snap := &snapshot{}
	l.snapshot = snap
	tmp, err := os.MkdirTemp("", "fullsend-child-ws-*")
	if err != nil {
		snap.err = err
		return "", err
	}
	snap.root = tmp
	snap.dir = tmp + "/workspace"
	if err := l.sess.Download(ctx, runtime.WorkspaceDir, snap.dir); err != nil {
		snap.err = fmt.Errorf("copying the parent's workspace: %w", err)
	}
	return snap.dir, snap.err
}

type snapshot struct {
	root, dir string
	err       error
}

func (l *loop) dropSnapshot() {
	l.snapMu.Lock()
	defer l.snapMu.Unlock()
	if l.snapshot != nil && l.snapshot.root != "" {
		_ = os.RemoveAll(l.snapshot.root)
	}
	l.snapshot = nil
}

// parseChildOptions reads subagent_profiles (a comma list of known
// profiles, "none" to offer no delegate_task) and max_parallel_children
// (1 to MaxParallelChildren; above 1 needs SetChildSessions).
func (r *Runtime) parseChildOptions(o map[string]string) error {
	if v, ok := o[OptSubagentProfiles]; ok {
		r.profilesOK = nil
		if v != "none" {
			for _, p := range strings.Split(v, ",") {
				p = strings.TrimSpace(p)
				if _, ok := profiles[p]; !ok {
					return fmt.Errorf("option %s: unknown profile %q (known: %s)", OptSubagentProfiles, p, strings.Join(profileNames, ", "))
				}
				if !slices.Contains(r.profilesOK, p) {
					r.profilesOK = append(r.profilesOK, p)
				}
			}
		}
	}
	if v, ok := o[OptMaxParallel]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxParallelChildren {
			return fmt.Errorf("option %s: %q is not between 1 and %d", OptMaxParallel, v, MaxParallelChildren)
		}
		r.maxParallel = n
	}
	if r.maxParallel > 1 && len(r.profilesOK) > 0 && r.provision == nil {
		return fmt.Errorf("option %s: %d children at once need a sandbox session each, and this run has no backend to provision them", OptMaxParallel, r.maxParallel)
	}
	return nil
}

// serialEvents keeps runtime.RunInput.Events calls from overlapping when
// parallel children report (their model retries) at the same time.
func serialEvents(f func(runtime.Event)) func(runtime.Event) {
	if f == nil {
		return nil
	}
	var mu sync.Mutex
	return func(e runtime.Event) {
		mu.Lock()
		defer mu.Unlock()
		f(e)
	}
}
