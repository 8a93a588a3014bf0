package scan

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/corpustest"
)

// evasionCase is one case of the evasion corpus (testdata/evasion).
type evasionCase struct {
	name    string
	content []byte
}

var rawEscape = regexp.MustCompile(`\\u\{([0-9a-fA-F]{1,6})\}`)

// loadEvasion reads one category file of the evasion corpus.
func loadEvasion(t *testing.T, path string) []evasionCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []evasionCase
	for _, part := range bytes.Split(b, []byte("=== "))[1:] {
		name, body, _ := bytes.Cut(part, []byte("\n"))
		c := evasionCase{name: string(name), content: body}
		if strings.HasSuffix(c.name, "(raw)") {
			c.content = rawEscape.ReplaceAllFunc(body, func(m []byte) []byte {
				v, err := strconv.ParseUint(string(rawEscape.FindSubmatch(m)[1]), 16, 32)
				if err != nil {
					t.Fatal(err)
				}
				return []byte(string(rune(v)))
			})
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	return out
}

// evasionThresholds are the catch rates each category must reach (set from
// the measured rates; the cheap categories must catch everything).
var evasionThresholds = map[string]float64{
	"normalisation": 1,
	"markup":        1,
	"exfiltration":  1,
	"paraphrase":    1,
	"language":      1,
	"encoded":       1,
	"crossfile":     1,
}

// minOverallCatch is the catch rate over every case of every category.
const minOverallCatch = 0.9

// TestEvasionCorpus scans every case of the evasion corpus as local
// content with the default policy and prints the catch rate per category
// (a case is caught when it is blocked); it scans the benign cases and the
// benign libraries (the fixture library, and the corpus when
// FULLSEND_CORPUS is set) and prints their false-positive rate (a file
// with a critical finding). It fails below the thresholds or on any false
// positive.
func TestEvasionCorpus(t *testing.T) {
	p, err := New(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// A category is a file of single-document cases (<cat>.txt) or a
	// directory of skill directories (<cat>/), scanned as units.
	paths, err := filepath.Glob(filepath.Join("testdata", "evasion", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "evasion"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			paths = append(paths, filepath.Join("testdata", "evasion", e.Name()+".txt"))
		}
	}
	sort.Strings(paths)
	total, caught := 0, 0
	seen := map[string]bool{}
	var report []string
	for _, path := range paths {
		cat := strings.TrimSuffix(filepath.Base(path), ".txt")
		if cat == "benign" {
			continue
		}
		min, ok := evasionThresholds[cat]
		if !ok {
			t.Errorf("%s: category without a threshold", path)
			continue
		}
		seen[cat] = true
		n, c := 0, 0
		var cases []evasionCase
		if _, err := os.Stat(path); err == nil {
			cases = loadEvasion(t, path)
		}
		for _, tc := range cases {
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
		n2, c2 := crossFileCases(t, p, filepath.Join("testdata", "evasion"), cat)
		n, c = n+n2, c+c2
		total, caught = total+n, caught+c
		rate := float64(c) / float64(n)
		report = append(report, fmt.Sprintf("%-14s caught %2d/%2d (%5.1f%%)", cat, c, n, 100*rate))
		if rate < min {
			t.Errorf("%s: catch rate %.1f%% below the threshold %.0f%%", cat, 100*rate, 100*min)
		}
	}
	for cat := range evasionThresholds {
		if !seen[cat] {
			t.Errorf("category %s has no cases", cat)
		}
	}
	overall := float64(caught) / float64(total)
	report = append(report, fmt.Sprintf("%-14s caught %2d/%2d (%5.1f%%)", "overall", caught, total, 100*overall))
	if overall < minOverallCatch {
		t.Errorf("overall catch rate %.1f%% below %.0f%%", 100*overall, 100*minOverallCatch)
	}

	// Benign: hand-written hard negatives, then the libraries.
	fp, n := 0, 0
	for _, tc := range loadEvasion(t, filepath.Join("testdata", "evasion", "benign.txt")) {
		r, err := p.Scan(ctx, tc.content, Meta{Path: "benign/" + tc.name})
		if err != nil {
			t.Fatal(err)
		}
		n++
		if len(r.Critical()) > 0 {
			fp++
			t.Errorf("false positive: benign/%s: %v", tc.name, r.Critical())
		}
	}
	report = append(report, fmt.Sprintf("%-14s false positives %d/%d", "benign cases", fp, n))
	corpustest.Each(t, func(t *testing.T, lib corpustest.Library) {
		files := libraryFiles(t, lib)
		fp := 0
		for name, b := range files {
			r, err := p.Scan(ctx, b, Meta{Path: name, Origin: Remote})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Critical()) > 0 {
				fp++
				t.Errorf("false positive: %s: %v", name, r.Critical())
			}
		}
		t.Logf("%-14s false positives %d/%d files", filepath.Base(lib.Dir), fp, len(files))
	})
	t.Log("evasion corpus:\n" + strings.Join(report, "\n"))
}
