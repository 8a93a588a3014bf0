//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fullsend-ai/fullsend/internal/chat"
	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/model/modeltest"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

// TestChatSuspendsWhenIdle: a chat whose session wrote a file goes idle
// past --idle-timeout: its sandbox is snapshotted and torn down; the next
// user_message provisions a new one, restores the snapshot and finds the
// file.
func TestChatSuspendsWhenIdle(t *testing.T) {
	needLocalSandbox(t)
	srv := modeltest.NewFunc(t, model.APIOpenAI, func(i int, r modeltest.Received) modeltest.Step {
		switch i {
		case 0:
			return modeltest.Call("c1", native.ToolBash, map[string]string{"command": "printf kept-while-suspended > /sandbox/workspace/repo/notes.txt"})
		case 2:
			return modeltest.Call("c2", native.ToolBash, map[string]string{"command": "cat /sandbox/workspace/repo/notes.txt"})
		}
		return modeltest.Say("ok")
	})
	setModelEnv(t, model.APIOpenAI, srv.URL+"/v1")
	ws := t.TempDir()
	p := startChat(t, "--workspace", ws, "chat", "--idle-timeout", "1s", "--target-repo", "none", helloHarness)
	p.send(`{"type":"user_message","session":"s1","text":"Write the note."}`)
	if e := p.until(chat.EnvTurnEnd); e[len(e)-1].StopReason != "completed" {
		t.Fatalf("turn 1: %+v", e[len(e)-1])
	}
	// Idle: the snapshot appears in the run directory's suspend/.
	runs := runpkg.RunsDir(ws)
	deadline := time.Now().Add(time.Minute)
	for {
		m, _ := filepath.Glob(filepath.Join(runs, "*", runpkg.SuspendDir, native.SnapshotsDir, "*.tar"))
		if len(m) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no suspend snapshot after the idle timeout")
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the teardown after the snapshot
	p.send(`{"type":"user_message","session":"s1","text":"Read the note."}`)
	e := p.until(chat.EnvTurnEnd)
	if end := e[len(e)-1]; end.StopReason != "completed" || end.Error != "" {
		t.Fatalf("turn 2: %+v", end)
	}
	if !hasEvent(e, "tool_result", "kept-while-suspended") {
		t.Errorf("the woken sandbox lacks the file: %v", kinds(e))
	}
	p.finish()
	for _, want := range []string{"sandbox suspended", "sandbox restored"} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, p.stderr.String())
		}
	}
	// The report: a suspend phase, then a second provision and a restore.
	ents, _ := filepath.Glob(filepath.Join(runs, "*", runpkg.ReportFile))
	if len(ents) != 1 {
		t.Fatalf("reports %v", ents)
	}
	data, err := os.ReadFile(ents[0])
	if err != nil {
		t.Fatal(err)
	}
	var rep runpkg.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ph := range rep.Phases {
		if ph.Status != "ok" {
			t.Errorf("phase %s: %s %s", ph.Name, ph.Status, ph.Error)
		}
		names = append(names, ph.Name)
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "suspend,provision,layout,bootstrap,scan_context,restore") {
		t.Errorf("phases %s", got)
	}
}
