package prescript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name, text string
		want       Result
		err        string
	}{
		{name: "empty", text: "", want: Result{}},
		{name: "skip with reason", text: "skipped=true\nreason=PR #4 already does it\n", want: Result{Skipped: true, Reason: "PR #4 already does it"}},
		{name: "spaces and comments", text: "# why\n  skipped = true  \n\n  # more\nreason = a=b # not a comment\n", want: Result{Skipped: true, Reason: "a=b # not a comment"}},
		{name: "false proceeds", text: "skipped=false\n", want: Result{}},
		{name: "last wins", text: "skipped=true\nskipped=false\n", want: Result{}},
		{name: "other keys relayed", text: "my-agent_pr=12\n", want: Result{Outputs: map[string]string{"my-agent_pr": "12"}}},
		{name: "CRLF lines", text: "skipped=true\r\nreason=x\r\n", want: Result{Skipped: true, Reason: "x"}},
		{name: "no equals", text: "skipped true\n", err: "want key=value"},
		{name: "heredoc", text: "reason<<EOF\nx\nEOF\n", err: "multi-line values"},
		{name: "bad key", text: "1x=2\n", err: "want [A-Za-z_]"},
		{name: "reserved key case", text: "SKIPPED=true\n", err: "reserved keys are lower-case"},
		{name: "empty skipped", text: "skipped=\n", err: "want true or false"},
		{name: "quoted skipped", text: "skipped=\"true\"\n", err: "want true or false"},
		{name: "yes is not true", text: "skipped=yes\n", err: "want true or false"},
		{name: "control char", text: "reason=a\x1b[31mb\n", err: "control character"},
		{name: "lone CR smuggles a line", text: "reason=x\rskipped=false\n", err: "control character"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(c.text)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Skipped != c.want.Skipped || got.Reason != c.want.Reason || len(got.Outputs) != len(c.want.Outputs) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			for k, v := range c.want.Outputs {
				if got.Outputs[k] != v {
					t.Errorf("output %s = %q", k, got.Outputs[k])
				}
			}
		})
	}
}

func TestReasonCapped(t *testing.T) {
	r, err := Parse("reason=" + strings.Repeat("é", MaxReason) + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Reason) > MaxReason || !strings.HasPrefix(strings.Repeat("é", MaxReason), r.Reason) || len(r.Reason) < MaxReason-1 {
		t.Fatalf("reason of %d bytes", len(r.Reason))
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p, err := Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dir); err == nil {
		t.Fatal("Create replaced an existing file")
	}
	if r, err := Read(p); err != nil || r.Skipped {
		t.Fatalf("empty file: %+v %v", r, err)
	}
	if err := os.WriteFile(p, []byte(strings.Repeat("a=b\n", MaxSize/4+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversized: %v", err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), p); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p); err == nil {
		t.Fatal("Read followed a symlink")
	}
}
