package native

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/runtimetest"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// scriptModel is a fake model: the parent asks for the delegate_task calls
// of its first turn and then ends; each child (known by its goal) runs
// childTurn. It records when each child's model call started and ended.
type scriptModel struct {
	parentCalls []model.ToolCall
	childTurn   func(ctx context.Context, goal string, req *model.Request) (*model.Response, error)

	mu      sync.Mutex
	parent  []*model.Request
	started map[string]time.Time
	ended   map[string]time.Time
}

func (m *scriptModel) Complete(ctx context.Context, req *model.Request) (*model.Response, error) {
	if !strings.HasPrefix(req.System, "You are a focused sub-agent") {
		m.mu.Lock()
		m.parent = append(m.parent, req)
		n := len(m.parent)
		m.mu.Unlock()
		msg := model.Message{Role: model.RoleAssistant}
		if n == 1 {
			msg.ToolCalls = m.parentCalls
			return &model.Response{Message: msg, StopReason: model.StopToolUse, Usage: model.Usage{OutputTokens: 1}}, nil
		}
		msg.Content = []model.Block{model.TextBlock("parent done")}
		return &model.Response{Message: msg, StopReason: model.StopEnd, Usage: model.Usage{OutputTokens: 1}}, nil
	}
	goal := req.Messages[0].Text()
	m.mu.Lock()
	if _, ok := m.started[goal]; !ok {
		m.started[goal] = time.Now()
	}
	m.mu.Unlock()
	resp, err := m.childTurn(ctx, goal, req)
	m.mu.Lock()
	m.ended[goal] = time.Now()
	m.mu.Unlock()
	return resp, err
}

func say(text string) *model.Response {
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: []model.Block{model.TextBlock(text)}}, StopReason: model.StopEnd, Usage: model.Usage{OutputTokens: 3}}
}

func delegateCall(id string, args map[string]any) model.ToolCall {
	return model.ToolCall{ID: id, Name: ToolDelegateTask, Arguments: modeltest.Args(args)}
}

// provisioner hands out fake sessions and remembers them.
type provisioner struct {
	t        *testing.T
	mu       sync.Mutex
	sessions []*runtimetest.Session
}

func (p *provisioner) provision(context.Context) (sandbox.Session, error) {
	s := runtimetest.NewSession(p.t)
	p.mu.Lock()
	p.sessions = append(p.sessions, s)
	p.mu.Unlock()
	return s, nil
}

func newScriptEnv(t *testing.T, m *scriptModel) *harnessEnv {
	h := newHarnessEnv(t, model.APIOpenAI)
	h.rt.o.Client = m
	m.started, m.ended = map[string]time.Time{}, map[string]time.Time{}
	return h
}

func sleepSay(d time.Duration, text string) func(ctx context.Context, goal string, req *model.Request) (*model.Response, error) {
	return func(ctx context.Context, goal string, _ *model.Request) (*model.Response, error) {
		select {
		case <-time.After(d):
			return say(text + " " + goal), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// TestParallelChildren: two delegate_task calls of one turn run at once
// with max_parallel_children 2 (both start before either ends), each in a
// session of its own holding a copy of the workspace, torn down after;
// with 1 they run one after the other in the parent's session. Results
// and children/<k>/ follow call order either way.
func TestParallelChildren(t *testing.T) {
	for _, max := range []int{1, 2} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			m := &scriptModel{
				parentCalls: []model.ToolCall{delegateCall("a", map[string]any{"goal": "A"}), delegateCall("b", map[string]any{"goal": "B"})},
				childTurn:   sleepSay(300*time.Millisecond, "did"),
			}
			h := newScriptEnv(t, m)
			p := &provisioner{t: t}
			h.rt.SetChildSessions(p.provision)
			out, err := h.run(context.Background(), h.input(map[string]string{OptMaxParallel: fmt.Sprint(max)}))
			if err != nil || out.StopReason != runtime.StopCompleted {
				t.Fatalf("outcome %+v err %v", out, err)
			}
			aStart, aEnd, bStart, bEnd := m.started["A"], m.ended["A"], m.started["B"], m.ended["B"]
			overlap := aStart.Before(bEnd) && bStart.Before(aEnd)
			if max == 2 && !overlap {
				t.Errorf("children did not overlap: A %v-%v B %v-%v", aStart, aEnd, bStart, bEnd)
			}
			if max == 1 && (overlap || !aEnd.Before(bStart)) {
				t.Errorf("children not serial in call order: A %v-%v B %v-%v", aStart, aEnd, bStart, bEnd)
			}
			// Results in call order, children numbered by call order.
			msgs := m.parent[1].Messages
			results := msgs[len(msgs)-2:]
			for i, id := range []string{"a", "b"} {
				var dr DelegateResult
				if results[i].ToolCallID != id || json.Unmarshal([]byte(results[i].Text()), &dr) != nil {
					t.Fatalf("result %d: %s", i, mustJSON(results[i]))
				}
				goal := strings.ToUpper(id)
				if dr.Child != fmt.Sprintf("children/%d", i+1) || dr.Summary != "did "+goal {
					t.Errorf("result %s: %+v", id, dr)
				}
				recs := readRecords(t, filepath.Join(h.runDir, ChildrenDir, fmt.Sprint(i+1)))
				if recs[1].Message.Text() != goal {
					t.Errorf("children/%d holds goal %q", i+1, recs[1].Message.Text())
				}
			}
			if max == 1 && len(p.sessions) != 0 {
				t.Errorf("serial children provisioned %d sessions", len(p.sessions))
			}
			if max == 2 {
				if len(p.sessions) != 2 {
					t.Fatalf("provisioned %d sessions, want 2", len(p.sessions))
				}
				for _, s := range p.sessions {
					if !s.Terminated() {
						t.Error("child session not torn down")
					}
					if got := string(s.ReadFile(t, repoDir+"/README.md")); got != "hello\n" {
						t.Errorf("child workspace README %q", got)
					}
				}
			}
		})
	}
}

// TestParallelChildFailureAndWorkspaceTools: a failing child is its own
// call's error while its sibling completes; a child's tools run in its own
// session.
func TestParallelChildFailureAndWorkspaceTools(t *testing.T) {
	m := &scriptModel{
		parentCalls: []model.ToolCall{
			delegateCall("ok", map[string]any{"goal": "read"}),
			delegateCall("bad", map[string]any{"goal": "fail"}),
		},
	}
	m.childTurn = func(ctx context.Context, goal string, req *model.Request) (*model.Response, error) {
		if goal == "fail" {
			return nil, fmt.Errorf("model exploded")
		}
		if len(req.Messages) == 1 {
			return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: "r1", Name: ToolWriteFile, Arguments: modeltest.Args(map[string]any{"path": "child.txt", "content": "mine"})}}}, StopReason: model.StopToolUse}, nil
		}
		return say("wrote"), nil
	}
	h := newScriptEnv(t, m)
	p := &provisioner{t: t}
	h.rt.SetChildSessions(p.provision)
	if _, err := h.run(context.Background(), h.input(map[string]string{OptMaxParallel: "4"})); err != nil {
		t.Fatal(err)
	}
	msgs := m.parent[1].Messages
	ok, bad := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if ok.IsError || !strings.Contains(ok.Text(), `"summary": "wrote"`) {
		t.Errorf("ok child: %s", mustJSON(ok))
	}
	if !bad.IsError || !strings.Contains(bad.Text(), "model exploded") {
		t.Errorf("failing child: %s", mustJSON(bad))
	}
	// The write happened in a child session, not in the parent's.
	if _, err := os.Stat(h.sess.HostPath(repoDir + "/child.txt")); err == nil {
		t.Error("child write reached the parent's workspace")
	}
	found := false
	for _, s := range p.sessions {
		if _, err := os.Stat(s.HostPath(repoDir + "/child.txt")); err == nil {
			found = true
		}
	}
	if !found {
		t.Error("child write not in its own session")
	}
}

// TestParallelChildrenCanceled: cancellation stops every running child.
func TestParallelChildrenCanceled(t *testing.T) {
	m := &scriptModel{
		parentCalls: []model.ToolCall{delegateCall("a", map[string]any{"goal": "A"}), delegateCall("b", map[string]any{"goal": "B"})},
		childTurn:   sleepSay(time.Minute, "never"),
	}
	h := newScriptEnv(t, m)
	p := &provisioner{t: t}
	h.rt.SetChildSessions(p.provision)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	out, _ := h.run(ctx, h.input(map[string]string{OptMaxParallel: "2"}))
	if out == nil || out.StopReason != runtime.StopTimeout && out.StopReason != runtime.StopCanceled {
		t.Fatalf("outcome %+v", out)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("children kept running after cancellation")
	}
	for _, s := range p.sessions {
		if !s.Terminated() {
			t.Error("child session not torn down after cancellation")
		}
	}
}

// TestChildTokenPool: the children of one turn share the parent's
// remaining output-token budget.
func TestChildTokenPool(t *testing.T) {
	m := &scriptModel{parentCalls: []model.ToolCall{delegateCall("a", map[string]any{"goal": "A"}), delegateCall("b", map[string]any{"goal": "B"})}}
	var mu sync.Mutex
	var asked []int
	m.childTurn = func(ctx context.Context, goal string, req *model.Request) (*model.Response, error) {
		mu.Lock()
		asked = append(asked, req.MaxTokens)
		mu.Unlock()
		r := say("x")
		r.Usage.OutputTokens = 60
		return r, nil
	}
	h := newScriptEnv(t, m)
	// Parent budget 101: its first turn spends 1, the children share 100.
	if _, err := h.run(context.Background(), h.input(map[string]string{OptMaxOutputTokens: "101", OptMaxParallel: "1"})); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 2 || asked[0] != 100 || asked[1] != 40 {
		t.Fatalf("children asked for %v, want [100 40]", asked)
	}
}

// TestSubagentProfiles: the child's tool table is exactly its profile's,
// the offered delegate_task lists the allowed profiles, a profile the run
// does not allow is refused, and the parent's own tools are unchanged.
func TestSubagentProfiles(t *testing.T) {
	m := &scriptModel{parentCalls: []model.ToolCall{
		delegateCall("d", map[string]any{"goal": "G1"}),
		delegateCall("r", map[string]any{"goal": "G2", "profile": "read_only"}),
		delegateCall("w", map[string]any{"goal": "G3", "profile": "web_fetch"}),
	}}
	var mu sync.Mutex
	tools := map[string][]string{}
	m.childTurn = func(ctx context.Context, goal string, req *model.Request) (*model.Response, error) {
		mu.Lock()
		for _, tl := range req.Tools {
			tools[goal] = append(tools[goal], tl.Name)
		}
		mu.Unlock()
		return say("ok"), nil
	}
	h := newScriptEnv(t, m)
	if _, err := h.run(context.Background(), h.input(map[string]string{OptSubagentProfiles: "default,read_only"})); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tools["G1"], ","); got != "bash,read_file,write_file,edit_file,list_dir,view_image,read_skill_resource" {
		t.Errorf("default profile tools %s", got)
	}
	if got := strings.Join(tools["G2"], ","); got != "read_file,list_dir,view_image,read_skill_resource" {
		t.Errorf("read_only profile tools %s", got)
	}
	if _, ran := tools["G3"]; ran {
		t.Error("a profile the run does not allow started a child")
	}
	msgs := m.parent[1].Messages
	if w := msgs[len(msgs)-1]; !w.IsError || !strings.Contains(w.Text(), `profile "web_fetch" is not allowed (allowed: default, read_only)`) {
		t.Errorf("refusal %s", mustJSON(w))
	}
	var parentTools []string
	for _, tl := range m.parent[0].Tools {
		parentTools = append(parentTools, tl.Name)
		if tl.Name == ToolDelegateTask && !strings.Contains(string(tl.Parameters), `"enum":["default","read_only"]`) {
			t.Errorf("delegate_task profile enum: %s", tl.Parameters)
		}
	}
	if got := strings.Join(parentTools, ","); got != "bash,read_file,write_file,edit_file,list_dir,view_image,read_skill_resource,run_skill_script,delegate_task" {
		t.Errorf("parent tools %s", got)
	}
}

// TestWebFetchProfile: the web_fetch profile's table is the web_fetch tool
// alone (no workspace tools). Where the tool is not built in, a child of
// that profile is refused with "web_fetch tool unavailable".
func TestWebFetchProfile(t *testing.T) {
	if got := strings.Join(profiles[ProfileWebFetch], ","); got != "web_fetch" {
		t.Fatalf("web_fetch profile %s", got)
	}
	m := &scriptModel{parentCalls: []model.ToolCall{delegateCall("w", map[string]any{"goal": "fetch", "profile": "web_fetch"})}}
	var got []string
	m.childTurn = func(ctx context.Context, goal string, req *model.Request) (*model.Response, error) {
		for _, tl := range req.Tools {
			got = append(got, tl.Name)
		}
		return say("fetched"), nil
	}
	h := newScriptEnv(t, m)
	if _, err := h.run(context.Background(), h.input(map[string]string{OptSubagentProfiles: "web_fetch"})); err != nil {
		t.Fatal(err)
	}
	msgs := m.parent[1].Messages
	res := msgs[len(msgs)-1]
	if _, built := allTools[ToolWebFetch]; built {
		if res.IsError || strings.Join(got, ",") != "web_fetch" {
			t.Errorf("web_fetch child tools %v result %s", got, res.Text())
		}
		return
	}
	if !res.IsError || !strings.Contains(res.Text(), "web_fetch tool unavailable") || got != nil {
		t.Errorf("without the tool: %s (child tools %v)", res.Text(), got)
	}
}

// TestChildOptions: bad subagent_profiles and max_parallel_children values
// are refused before the loop starts, and more than one child at once
// needs a way to provision child sessions.
func TestChildOptions(t *testing.T) {
	for opts, want := range map[string]string{
		OptSubagentProfiles + "=root":      `unknown profile "root"`,
		OptMaxParallel + "=0":              "is not between 1 and 8",
		OptMaxParallel + "=9":              "is not between 1 and 8",
		OptMaxParallel + "=two":            "is not between 1 and 8",
		OptMaxParallel + "=2":              "no backend to provision them",
		OptMaxParallel + "=1":              "",
		OptSubagentProfiles + "=none":      "",
		OptSubagentProfiles + "=read_only": "",
	} {
		k, v, _ := strings.Cut(opts, "=")
		r := New(Options{})
		_, err := r.parseOptions(runtime.RunInput{Options: map[string]string{k: v}})
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", opts, err, want)
		}
	}
}

// TestChildNumberingContinues: a later iteration (or a resumed run) starts
// its children after those already in the run directory.
func TestChildNumberingContinues(t *testing.T) {
	m := &scriptModel{parentCalls: []model.ToolCall{delegateCall("a", map[string]any{"goal": "A"})}, childTurn: sleepSay(0, "ok")}
	h := newScriptEnv(t, m)
	if err := os.MkdirAll(filepath.Join(h.runDir, ChildrenDir, "1"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := h.run(context.Background(), h.input(nil)); err != nil {
		t.Fatal(err)
	}
	msgs := m.parent[1].Messages
	if r := msgs[len(msgs)-1]; r.IsError || !strings.Contains(r.Text(), `"child": "children/2"`) {
		t.Fatalf("result %s", r.Text())
	}
}
