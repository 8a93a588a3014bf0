package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const dispatchEvent = `{"repo":"o/r","entity":{"kind":"change_proposal","id":7,"url":"https://github.com/o/r/pull/7"},
"transition":{"kind":"label_changed","label":{"name":"review","action":"added"}},
"actor":{"id":"alice","kind":"human","role":"write"},
"state":{"labels":["review"]},"source":{"system":"github","raw_type":"pull_request","raw_action":"labeled"}}`

// dispatchDirFixture is a fullsend dir (outside any work tree) with three
// harnesses: one the event triggers, one it does not, one without trigger.
func dispatchDirFixture(t *testing.T) (dir, ev string) {
	t.Helper()
	dir = t.TempDir()
	files := map[string]string{
		"agents/a.md":                "---\nname: a\n---\nhi\n",
		"harness/review.yaml":        "agent: agents/a.md\ndescription: reviews\ntrigger: event.transition.kind == \"label_changed\" && event.transition.label.name == \"review\"\n",
		"harness/triage.yaml":        "agent: agents/a.md\ntrigger: event.entity.kind == \"work_item\" && event.transition.kind == \"opened\"\n",
		"harness/manual.yaml":        "agent: agents/a.md\n",
		"harness/manual.script.yaml": "steps:\n  - write_result: {value: {status: ok}}\n",
		"event.json":                 dispatchEvent,
	}
	for rel, body := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, filepath.Join(dir, "event.json")
}

func TestDispatch(t *testing.T) {
	dir, ev := dispatchDirFixture(t)
	review := filepath.Join(dir, "harness", "review.yaml")

	code, stdout, stderr := runCLI(t, "dispatch", "--fullsend-dir", dir, "--event", ev)
	if code != 0 || stdout != "review\t"+review+"\n" {
		t.Fatalf("exit %d stdout %q stderr %s", code, stdout, stderr)
	}

	code, stdout, stderr = runCLI(t, "dispatch", "--fullsend-dir", dir, "--event", ev, "--matrix")
	if code != 0 || strings.TrimSpace(stdout) != `{"include":[{"name":"review","harness":"`+review+`"}]}` {
		t.Fatalf("--matrix: exit %d stdout %q stderr %s", code, stdout, stderr)
	}

	code, stdout, stderr = runCLI(t, "dispatch", "--fullsend-dir", dir, "--event", ev, "--json", filepath.Join(dir, "harness", "triage.yaml"), review)
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, stderr)
	}
	var out dispatchJSON
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Harnesses) != 2 || out.Harnesses[0].Triggered || out.Harnesses[0].Name != "triage" ||
		!out.Harnesses[1].Triggered || out.Harnesses[1].Description != "reviews" {
		t.Errorf("--json = %+v", out)
	}

	// No match: an empty matrix, exit 0.
	code, stdout, _ = runCLI(t, "dispatch", "--fullsend-dir", dir, "--event", ev, "--matrix", filepath.Join(dir, "harness", "manual.yaml"))
	if code != 0 || strings.TrimSpace(stdout) != `{"include":[]}` {
		t.Errorf("no match: exit %d stdout %q", code, stdout)
	}
}

func TestDispatchErrors(t *testing.T) {
	dir, ev := dispatchDirFixture(t)
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("agent: agents/a.md\ntrigger: event.actor.rol == \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bigEv := filepath.Join(dir, "big.json")
	if err := os.WriteFile(bigEv, []byte(strings.Repeat(" ", 1<<20+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"dispatch"}, 2, "--event FILE is required"},
		{[]string{"dispatch", "--event", ev, "--json", "--matrix"}, 2, "choose one"},
		{[]string{"dispatch", "--event", ev, "--dir", dir, "x.yaml"}, 2, "not both"},
		{[]string{"dispatch", "--event", ev, bad}, 1, "bad.yaml:2: trigger: invalid value: CEL: 1:12: undefined field 'rol'"},
		{[]string{"dispatch", "--event", bigEv}, 1, "big.json: larger than 1048576 bytes"},
		{[]string{"dispatch", "--event", filepath.Join(dir, "agents/a.md")}, 1, "not a valid event"},
		{[]string{"dispatch", "--event", ev, "--dir", filepath.Join(dir, "none")}, 1, "none: no such file or directory"},
	} {
		code, _, stderr := runCLI(t, append([]string{"--fullsend-dir", dir}, c.args...)...)
		if code != c.code || !strings.Contains(oneStderrLine(t, stderr), c.want) {
			t.Errorf("%v: exit %d, %s; want %d %q", c.args, code, stderr, c.code, c.want)
		}
	}
}

// TestValidateJSONDescription: validate --json shows description and
// trigger.
func TestValidateJSONDescription(t *testing.T) {
	dir, _ := dispatchDirFixture(t)
	code, stdout, stderr := runCLI(t, "--fullsend-dir", dir, "validate", "--json", filepath.Join(dir, "harness", "review.yaml"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out validateJSON
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Description != "reviews" || !strings.HasPrefix(out.Trigger, "event.transition.kind") {
		t.Errorf("description %q trigger %q", out.Description, out.Trigger)
	}
}
