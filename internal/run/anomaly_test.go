package run

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/resolve"
)

// TestRuntimeFetchHistory: the history of a harness's runtime fetches is
// read back from the runs directory as untrusted input: only this
// harness's finished, unflagged runs, the newest HistoryRuns of them,
// counts clamped to max_runtime_fetches, nothing through a symlink.
func TestRuntimeFetchHistory(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs")
	if err := os.MkdirAll(runs, 0o700); err != nil {
		t.Fatal(err)
	}
	n := 0
	add := func(source, status string, fetches int, anomalies ...resolve.Anomaly) string {
		n++
		id := fmt.Sprintf("20260101T000000.%03dZ-aaaaaa", n)
		r := Report{Version: ReportVersion, RunID: id, Status: status, Harness: HarnessInfo{Source: source}, Anomalies: anomalies}
		r.Events.RuntimeFetches = fetches
		b, _ := json.Marshal(r)
		if err := os.MkdirAll(filepath.Join(runs, id), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(runs, id, ReportFile), b, 0o600); err != nil {
			t.Fatal(err)
		}
		return id
	}
	add("h.yaml", StatusSucceeded, 3)
	if most, k := runtimeFetchHistory(runs, "", "h.yaml", 10); most != 3 || k != 1 {
		t.Fatalf("one run: %d of %d", most, k)
	}
	add("other.yaml", StatusSucceeded, 9)
	add("h.yaml", StatusRunning, 9)
	add("h.yaml", StatusFailed, 9, resolve.Anomaly{Kind: resolve.AnomalyRuntimeFetches})
	cur := add("h.yaml", StatusSucceeded, 9)
	if most, k := runtimeFetchHistory(runs, cur, "h.yaml", 10); most != 3 || k != 1 {
		t.Errorf("other harness, running, flagged and current runs counted: %d of %d", most, k)
	}
	add("h.yaml", StatusSucceeded, 1000)
	if most, _ := runtimeFetchHistory(runs, cur, "h.yaml", 10); most != 10 {
		t.Errorf("forged count not clamped: %d", most)
	}
	// A symlinked run directory is never read.
	evil := t.TempDir()
	b, _ := json.Marshal(Report{Version: ReportVersion, Status: StatusSucceeded, Harness: HarnessInfo{Source: "x.yaml"}, Events: EventSummary{RuntimeFetches: 7}})
	if err := os.WriteFile(filepath.Join(evil, ReportFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(evil, filepath.Join(runs, "20270101T000000.000Z-bbbbbb")); err != nil {
		t.Fatal(err)
	}
	if most, k := runtimeFetchHistory(runs, "", "x.yaml", 10); most != 0 || k != 0 {
		t.Errorf("symlinked run read: %d of %d", most, k)
	}
	// Only the newest HistoryRuns runs count.
	for range HistoryRuns {
		add("h.yaml", StatusSucceeded, 1)
	}
	if most, k := runtimeFetchHistory(runs, cur, "h.yaml", 10); most != 1 || k != HistoryRuns {
		t.Errorf("last %d runs: %d of %d", HistoryRuns, most, k)
	}
}
