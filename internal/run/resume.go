package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/fullsend-ai/fullsend/internal/rundir"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

// ErrRunInProgress is returned when another process holds the run
// directory (a run still executing cannot be resumed).
var ErrRunInProgress = errors.New("the run is in progress in another process")

// ErrNotResumable is returned by `--resume` for a run that has nothing to
// continue: no native transcript, another runtime, or already succeeded.
var ErrNotResumable = errors.New("run cannot be resumed")

// ErrRunRefused is returned by `--resume` for a run directory that fails
// the checks of untrusted input: a symlink or a file of another user in
// it, or a transcript whose MAC chain does not verify with this user's
// run key (written by someone else, edited, or copied from another run).
var ErrRunRefused = errors.New("not resumed")

// openResumed opens the run directory of a run to continue and checks its
// whole tree (see rundir.Dir.CheckTree).
func openResumed(dir, id string) (*rundir.Dir, error) {
	d, err := rundir.OpenRun(filepath.Dir(dir), id)
	if err == nil {
		if err = d.CheckTree(); err != nil {
			d.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("--resume: run %s: %w: %w (start a new run)", id, err, ErrRunRefused)
	}
	return d, nil
}

// prepareResume checks that the run directory d (run id) holds a native
// loop to continue, that its transcript (and the images it names) verify
// against this user's run key, and keeps the previous attempt's report as
// report.attempt-N.json (N from 1). Nothing is written before the checks
// pass. It returns the number of resumes so far (this one included) and a
// note for the new report, which says so when the harness changed since
// the previous attempt (harnessSHA is the current one's sha256).
//
// What resume trusts is the transcript: its system prompt, tools, model
// name, limits, messages and image records, all under the MAC chain.
// report.json only chooses the attempt number and whether the run may be
// resumed at all (not another runtime, not succeeded): a forged one can
// refuse a resume, never shape one.
func prepareResume(d *rundir.Dir, id, harnessSHA string) (int, string, error) {
	if _, err := d.Lstat(native.TranscriptFile); err != nil {
		return 0, "", fmt.Errorf("--resume: run %s: %w: no %s (only native runs can be resumed)", id, ErrNotResumable, native.TranscriptFile)
	}
	verify := func() error {
		st, err := native.LoadState(d.Path())
		if err == nil {
			err = native.VerifySnapshot(d.Path(), st)
		}
		if err != nil {
			return fmt.Errorf("--resume: run %s: %w: %w (start a new run)", id, err, ErrRunRefused)
		}
		return nil
	}
	data, err := d.ReadFile(ReportFile)
	if errors.Is(err, fs.ErrNotExist) {
		// Killed before its first report: nothing to keep.
		if err := verify(); err != nil {
			return 0, "", err
		}
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
	if prev.Resumes < 0 || prev.Resumes > 10000 {
		return 0, "", fmt.Errorf("--resume: run %s: %s: resumes %d out of range", id, ReportFile, prev.Resumes)
	}
	if err := verify(); err != nil {
		return 0, "", err
	}
	n := prev.Resumes + 1
	keep := fmt.Sprintf("report.attempt-%d.json", n)
	if err := d.WriteAtomic(keep, data, 0o600); err != nil {
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
