package run

import (
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/rundir"
)

// HistoryRuns is N of the runtime-fetch anomaly: a run that makes more
// runtime fetches than the most any of the last HistoryRuns runs of the
// same harness made is anomalous. Runs are read back from the runs
// directory (report.json, untrusted input); at most historyScan run
// directories are opened to find them.
const (
	HistoryRuns = 10
	historyScan = 200
)

// failOnAnomaly: with --frozen or in CI an anomalous fetch fails the run.
func (x *execution) failOnAnomaly() bool {
	if x.o.Frozen {
		return true
	}
	ci := x.o.CI
	return ci != nil && ci.Platform != "" && ci.Platform != "none"
}

// why names what makes an anomaly fatal.
func (x *execution) anomalyRule() string {
	if x.o.Frozen {
		return "--frozen"
	}
	return "in CI (" + x.o.CI.DetectedBy + ")"
}

// staticAnomalies fails the run before anything runs when resolution
// found fetches that differ from lock.yaml (recorded in report.json's
// "anomalies"; resolve audited them and the CLI printed them) and the run
// is frozen or in CI.
func (x *execution) staticAnomalies() error {
	if len(x.report.Anomalies) == 0 || !x.failOnAnomaly() {
		return nil
	}
	a := x.report.Anomalies[0]
	return fmt.Errorf("%w %s: %s: %s; if the change is intended, run `%s`", resolve.ErrAnomalousFetch, x.anomalyRule(), a.Kind, a.Detail, resolve.FixCommand(x.plan.Source))
}

// runtimeAnomaly compares the run's runtime fetches with the most of the
// harness's last HistoryRuns runs. More is an anomaly: recorded in
// report.json, audited, one stderr line, and with --frozen or in CI the
// run fails (err, when nil, becomes the anomaly). No earlier run, no
// comparison.
func (x *execution) runtimeAnomaly(err error) error {
	used := x.report.Events.RuntimeFetches
	if used == 0 || x.plan.Resume != "" {
		return err
	}
	most, runs := runtimeFetchHistory(x.plan.RunsDir, x.report.RunID, x.plan.Source, x.plan.Harness.EffectiveMaxRuntimeFetches())
	if runs == 0 || used <= most {
		return err
	}
	a := resolve.Anomaly{
		Kind: resolve.AnomalyRuntimeFetches, URL: x.plan.Source,
		Detail: fmt.Sprintf("%d runtime fetches, more than the most (%d) of the last %d runs of %s", used, most, runs, x.plan.Source),
	}
	x.report.Anomalies = append(x.report.Anomalies, a)
	x.warn(a.String())
	if x.o.Fetch != nil && x.o.Fetch.Audit != nil {
		if aerr := x.o.Fetch.Audit.Append(audit.Entry{
			TraceID: x.o.Fetch.TraceID, FetchTime: time.Now().UTC(), URL: a.URL,
			FetchType: audit.FetchRuntime, AllowedBy: "allow_runtime_fetch", Anomaly: a.Kind, Detail: a.Detail,
		}); aerr != nil && err == nil {
			return fmt.Errorf("audit log: %w", aerr)
		}
	}
	if err == nil && x.failOnAnomaly() {
		return fmt.Errorf("%w %s: %s: %s", resolve.ErrAnomalousFetch, x.anomalyRule(), a.Kind, a.Detail)
	}
	return err
}

// runtimeFetchHistory returns the most runtime fetches any of the last
// HistoryRuns finished runs of harness source made, and how many runs
// that is. Runs flagged for their runtime fetches do not count: retrying
// does not raise the baseline. The runs directory is untrusted input: reports are read
// through package rundir (no symlinks, the user's own directories),
// unreadable or foreign ones are skipped, and counts are clamped to
// [0, limit] (a run cannot have made more than max_runtime_fetches).
func runtimeFetchHistory(runsDir, current, source string, limit int) (most, runs int) {
	if rundir.CheckRunsDir(runsDir) != nil {
		return 0, 0
	}
	ents, err := os.ReadDir(runsDir)
	if err != nil {
		return 0, 0
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.IsDir() && e.Name() != current && CheckRunID(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names))) // run ids sort by time
	for i, id := range names {
		if i >= historyScan || runs >= HistoryRuns {
			break
		}
		r, err := Load(runsDir, id)
		if err != nil || r.Harness.Source != source || r.Status == StatusRunning || flagged(r) {
			continue
		}
		n := min(max(r.Events.RuntimeFetches, 0), limit)
		most = max(most, n)
		runs++
	}
	return most, runs
}

// flagged reports whether r recorded a runtime_fetches anomaly.
func flagged(r *Report) bool {
	for _, a := range r.Anomalies {
		if a.Kind == resolve.AnomalyRuntimeFetches {
			return true
		}
	}
	return false
}
