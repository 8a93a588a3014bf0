package run

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A host that refuses report.json (a full disk) leaves either a minimal
// report, so `runs ls` and `runs show` agree on the run, or no run
// directory at all; never a directory without a report.
func TestReportSaveOnWriteError(t *testing.T) {
	enospc := &os.PathError{Op: "write", Path: "report.json", Err: syscall.ENOSPC}
	for _, c := range []struct {
		name    string
		fails   int // how many writes fail
		err     string
		listed  bool
		status  string
		message string
	}{
		{"full report refused, minimal written", 1,
			"write report.json: no space left on device (a minimal report.json was written)", true, StatusFailed,
			"writing report.json: write report.json: no space left on device (this is a minimal report; the run's other files may be incomplete)"},
		{"both refused, directory removed", 2,
			"write report.json: no space left on device (the run directory RUNDIR was removed)", false, "", ""},
		{"no error", 0, "", true, StatusSucceeded, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			runs := t.TempDir()
			id := "20260101T000000.000Z-abcdef"
			dir := filepath.Join(runs, id)
			if err := os.MkdirAll(filepath.Join(dir, "output"), 0o700); err != nil {
				t.Fatal(err)
			}
			left := c.fails
			writeFile = func(p string, b []byte, m os.FileMode) error {
				if left > 0 {
					left--
					return enospc
				}
				return os.WriteFile(p, b, m)
			}
			defer func() { writeFile = origWriteFile }()
			r := &Report{Version: 1, RunID: id, Status: StatusSucceeded, StartedAt: time.Unix(0, 0).UTC(), Runtime: "script", dir: dir}
			err := r.save()
			want := c.err
			if want != "" {
				want = strings.Replace(want, "RUNDIR", dir, 1)
			}
			if got := fmt.Sprint(err); (err == nil) != (want == "") || (err != nil && got != want) {
				t.Fatalf("save: %v\nwant %s", err, want)
			}
			reps, lerr := List(runs)
			if lerr != nil {
				t.Fatal(lerr)
			}
			if (len(reps) == 1) != c.listed {
				t.Fatalf("runs listed: %d, want listed %v", len(reps), c.listed)
			}
			_, serr := os.Stat(dir)
			if c.listed != (serr == nil) {
				t.Fatalf("run dir present %v, listed %v: ls and show would disagree", serr == nil, c.listed)
			}
			if c.listed && (reps[0].Status != c.status || reps[0].Error != c.message) {
				t.Fatalf("report: %s %q; want %s %q", reps[0].Status, reps[0].Error, c.status, c.message)
			}
		})
	}
}

var origWriteFile = writeFile
