package scan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// heldOutThresholds are the catch rates each category of the held-out set
// (testdata/heldout) must reach. The set was written before the rule lists
// were read; the figures are reported apart from TestEvasionCorpus's.
var heldOutThresholds = map[string]float64{
	"normalisation": 1,
	"markup":        1,
	"exfiltration":  1,
	"paraphrase":    1,
	"language":      1,
	"leetspeak":     1,
	"split":         1,
	"encoded":       0.8,
	"crossfile":     1,
}

// minHeldOutOverall is the catch rate over every held-out case.
const minHeldOutOverall = 0.95

// maxHeldOutFP is how many held-out benign texts may have a critical
// finding.
const maxHeldOutFP = 0

// TestHeldOutEvasions scans every case of the held-out set as skill
// content with the default policy (a case is caught when it is blocked;
// skill directories are scanned as one unit), prints the catch rate per
// category and fails below the thresholds; it scans the held-out benign
// texts and fails on any critical finding among them.
func TestHeldOutEvasions(t *testing.T) {
	p, err := New(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	root := filepath.Join("testdata", "heldout")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	cats := map[string]bool{}
	for _, e := range entries {
		switch {
		case e.IsDir():
			cats[e.Name()] = true
		case strings.HasSuffix(e.Name(), ".txt") && e.Name() != "benign.txt":
			cats[strings.TrimSuffix(e.Name(), ".txt")] = true
		}
	}
	var names []string
	for c := range cats {
		names = append(names, c)
	}
	sort.Strings(names)
	total, caught := 0, 0
	var report []string
	for _, cat := range names {
		min, ok := heldOutThresholds[cat]
		if !ok {
			t.Errorf("%s: category without a threshold", cat)
			continue
		}
		n, c := 0, 0
		path := filepath.Join(root, cat+".txt")
		if _, err := os.Stat(path); err == nil {
			for _, tc := range loadEvasion(t, path) {
				r, err := p.Scan(ctx, tc.content, Meta{Path: cat + "/" + tc.name, Kind: "skill"})
				if err != nil {
					t.Fatal(err)
				}
				n++
				if r.Blocked {
					c++
				} else {
					t.Logf("missed: %s: %s", cat, tc.name)
				}
			}
		}
		n2, c2 := crossFileCases(t, p, root, cat)
		n, c = n+n2, c+c2
		total, caught = total+n, caught+c
		rate := float64(c) / float64(n)
		report = append(report, fmt.Sprintf("%-14s caught %2d/%2d (%5.1f%%)", cat, c, n, 100*rate))
		if rate < min {
			t.Errorf("held-out %s: catch rate %.1f%% below the threshold %.0f%%", cat, 100*rate, 100*min)
		}
	}
	for cat := range heldOutThresholds {
		if !cats[cat] {
			t.Errorf("held-out category %s has no cases", cat)
		}
	}
	overall := float64(caught) / float64(total)
	report = append(report, fmt.Sprintf("%-14s caught %2d/%2d (%5.1f%%)", "overall", caught, total, 100*overall))
	if overall < minHeldOutOverall {
		t.Errorf("held-out overall catch rate %.1f%% below %.0f%%", 100*overall, 100*minHeldOutOverall)
	}
	fp, n := 0, 0
	for _, tc := range loadEvasion(t, filepath.Join(root, "benign.txt")) {
		r, err := p.Scan(ctx, tc.content, Meta{Path: "benign/" + tc.name, Kind: "skill"})
		if err != nil {
			t.Fatal(err)
		}
		n++
		if len(r.Critical()) > 0 {
			fp++
			t.Logf("false positive: heldout benign/%s: %v", tc.name, r.Critical())
		}
	}
	report = append(report, fmt.Sprintf("%-14s false positives %d/%d", "benign", fp, n))
	if fp > maxHeldOutFP {
		t.Errorf("held-out benign: %d false positives, at most %d allowed", fp, maxHeldOutFP)
	}
	t.Log("held-out set:\n" + strings.Join(report, "\n"))
}
