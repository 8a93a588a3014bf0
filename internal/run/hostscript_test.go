package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Host scripts never run in the run directory (whose output/ the agent
// wrote): their working directory is fresh, empty and removed afterwards,
// and the agent's output reaches them only as a path in the environment.
func TestHostScriptWorkingDirectory(t *testing.T) {
	runDir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(runDir, OutputSubdir), 0o700); err != nil {
		t.Fatal(err)
	}
	// What an agent could leave behind for a script that uses relative paths.
	if err := os.WriteFile(filepath.Join(runDir, OutputSubdir, "pwn.sh"), []byte("#!/bin/sh\ntouch \"$MARK\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "report")
	mark := filepath.Join(t.TempDir(), "mark")
	script := filepath.Join(t.TempDir(), "validate.sh")
	body := "#!/bin/sh\n" +
		"{ pwd; ls -A | wc -l; echo \"$FULLSEND_OUTPUT_DIR\"; } > \"$REPORT\"\n" +
		"[ -x output/pwn.sh ] && output/pwn.sh\n" +
		"exit 0\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"REPORT": report, "MARK": mark, "FULLSEND_OUTPUT_DIR": filepath.Join(runDir, OutputSubdir)}
	if err := runHostScript(context.Background(), "validation_loop.script", script, filepath.Join(runDir, "v.log"), env, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the script ran a file the agent wrote through a relative path")
	}
	out, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("report %q", out)
	}
	cwd := lines[0]
	if cwd == runDir || strings.HasPrefix(cwd, runDir+"/") {
		t.Fatalf("script ran in the run directory %s", cwd)
	}
	if strings.TrimSpace(lines[1]) != "0" {
		t.Fatalf("working directory was not empty: %s entries", lines[1])
	}
	if lines[2] != filepath.Join(runDir, OutputSubdir) {
		t.Fatalf("FULLSEND_OUTPUT_DIR = %q", lines[2])
	}
	if _, err := os.Stat(cwd); !os.IsNotExist(err) {
		t.Fatalf("working directory %s left behind: %v", cwd, err)
	}
}
