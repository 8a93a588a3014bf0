package cli

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// Bounds of a skill unit judged as one by `fullsend scan`.
const (
	maxUnitFiles    = 64
	maxUnitFileSize = 1 << 20
)

// skillUnits groups scanned paths by the skill directory holding them: the
// nearest ancestor directory (or the path's own) with a SKILL.md that was
// scanned too. Only units of two files or more are returned, each as its
// directory and its files' paths in order.
func skillUnits(paths []string) map[string][]string {
	scanned := map[string]bool{}
	for _, p := range paths {
		scanned[p] = true
	}
	units := map[string][]string{}
	for _, p := range paths {
		for d := filepath.Dir(p); ; d = filepath.Dir(d) {
			if scanned[filepath.Join(d, "SKILL.md")] {
				units[d] = append(units[d], p)
				break
			}
			if parent := filepath.Dir(d); parent == d {
				break
			}
		}
	}
	for d, fs := range units {
		if len(fs) < 2 || len(fs) > maxUnitFiles {
			delete(units, d)
			continue
		}
		sort.Strings(fs)
	}
	return units
}

// scanSkillUnits judges each skill unit among paths as one
// (scan.Pipeline.CrossFile) and returns the cross-file findings. found are
// the findings the files have on their own. Files too large or unreadable
// were reported by the per-file scan and are left out here.
func scanSkillUnits(ctx context.Context, p *scan.Pipeline, paths []string, found []scan.Finding, origin scan.Origin) (*scan.Result, error) {
	units := skillUnits(paths)
	dirs := make([]string, 0, len(units))
	for d := range units {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	total := &scan.Result{}
	for _, d := range dirs {
		files := map[string][]byte{}
		for _, f := range units[d] {
			st, err := os.Stat(f)
			if err != nil || !st.Mode().IsRegular() || st.Size() > maxUnitFileSize {
				continue
			}
			b, err := limit.ReadFile(os.Open, f, maxUnitFileSize) // it may have grown since Stat
			if err != nil {
				continue
			}
			rel, err := filepath.Rel(d, f)
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			files[filepath.ToSlash(rel)] = b
		}
		r, err := p.CrossFile(ctx, files, found, scan.Meta{Path: d, Origin: origin, Kind: "skill"})
		if r != nil {
			total.Findings = append(total.Findings, r.Findings...)
			total.Blocked = total.Blocked || r.Blocked
		}
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
