package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

// ErrRunInProgress is returned when another process holds the run
// directory (a run still executing cannot be resumed).
var ErrRunInProgress = errors.New("the run is in progress in another process")

// ErrNotResumable is returned by `--resume` for a run that has nothing to
// continue: no native transcript, another runtime, or already succeeded.
var ErrNotResumable = errors.New("run cannot be resumed")

// prepareResume checks that the run directory dir (run id) holds a native
// loop to continue and keeps the previous attempt's report as
// report.attempt-N.json (N from 1). It returns the number of resumes so far
// (this one included) and a note for the new report, which says so when
// the harness changed since the previous attempt (harnessSHA is the
// current one's sha256).
func prepareResume(dir, id, harnessSHA string) (int, string, error) {
	if _, err := os.Stat(filepath.Join(dir, native.TranscriptFile)); err != nil {
		return 0, "", fmt.Errorf("--resume: run %s: %w: no %s (only native runs can be resumed)", id, ErrNotResumable, native.TranscriptFile)
	}
	data, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if errors.Is(err, fs.ErrNotExist) {
		// Killed before its first report: nothing to keep.
		return 1, fmt.Sprintf("resumed run %s (attempt 2; the previous attempt left no report)", id), nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("--resume: run %s: %w", id, err)
	}
	var prev Report
	if err := json.Unmarshal(data, &prev); err != nil {
		return 0, "", fmt.Errorf("--resume: run %s: %s: %w", id, ReportFile, err)
	}
	if prev.Runtime != native.Name {
		return 0, "", fmt.Errorf("--resume: run %s: %w: it used the %s runtime (only native runs can be resumed)", id, ErrNotResumable, prev.Runtime)
	}
	if prev.Status == StatusSucceeded {
		return 0, "", fmt.Errorf("--resume: run %s: %w: it already succeeded", id, ErrNotResumable)
	}
	n := prev.Resumes + 1
	keep := fmt.Sprintf("report.attempt-%d.json", n)
	if err := os.WriteFile(filepath.Join(dir, keep), data, 0o600); err != nil {
		return 0, "", fmt.Errorf("--resume: run %s: %w", id, err)
	}
	note := fmt.Sprintf("resumed run %s (attempt %d; previous attempt %s: %s, report kept as %s)", id, n+1, prev.StartedAt.Format("2006-01-02T15:04:05Z"), prev.Status, keep)
	if prev.Harness.SHA256 != "" && harnessSHA != "" && prev.Harness.SHA256 != harnessSHA {
		note += fmt.Sprintf("; the harness changed since (sha256 %s, was %s): the conversation keeps its recorded system prompt and tools", short(harnessSHA), short(prev.Harness.SHA256))
	}
	return n, note, nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
