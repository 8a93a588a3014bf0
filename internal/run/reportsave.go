package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fullsend-ai/fullsend/internal/rundir"
)

// writeFile is how report.json reaches the disk: an atomic replace through
// the run directory's no-follow root (package rundir). Tests make it fail,
// as a full disk would.
var writeFile = func(p string, data []byte, mode os.FileMode) error {
	d, err := rundir.Open(filepath.Dir(p))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.WriteAtomic(filepath.Base(p), data, mode)
}

// save writes the report; when the host refuses it (ENOSPC, EIO…) it
// writes a minimal one instead — run id, status failed, the error, times —
// small enough to fit where the full one did not, so `runs ls` and `runs
// show latest` still agree on the run. When even that fails the run
// directory is removed (nothing half-written is left to disagree about)
// and the error says so.
func (r *Report) save() error {
	werr := r.write()
	if werr == nil {
		return nil
	}
	minimal := Report{
		Version: r.Version, RunID: r.RunID, Status: StatusFailed, ExitCode: r.ExitCode,
		StartedAt: r.StartedAt, FinishedAt: r.FinishedAt, DurationMS: r.DurationMS,
		Harness: HarnessInfo{Source: r.Harness.Source, SHA256: r.Harness.SHA256}, Runtime: r.Runtime, Agent: r.Agent,
		Error: fmt.Sprintf("writing %s: %v (this is a minimal report; the run's other files may be incomplete)", ReportFile, werr),
	}
	if minimal.ExitCode == 0 {
		minimal.ExitCode = 1
	}
	data, err := json.MarshalIndent(&minimal, "", "  ")
	if err == nil {
		err = writeFile(filepath.Join(r.dir, ReportFile), append(data, '\n'), 0o600)
	}
	if err == nil {
		r.Status, r.Error = minimal.Status, minimal.Error
		if r.ExitCode == 0 {
			r.ExitCode = minimal.ExitCode
		}
		return fmt.Errorf("%w (a minimal %s was written)", werr, ReportFile)
	}
	if rerr := os.RemoveAll(r.dir); rerr != nil {
		return errors.Join(werr, fmt.Errorf("removing the run directory %s: %w", r.dir, rerr))
	}
	return fmt.Errorf("%w (the run directory %s was removed)", werr, r.dir)
}
