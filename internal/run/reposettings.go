package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/runtime/builtin"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// repoSettingsFindings are the runtime's findings about the target
// repository's own settings for its agent CLI (runtime.RepoChecker: the
// claude runtime's .claude/settings*.json, agents and .mcp.json), read
// through repoFS: a symlink is not in the copy, so it is not read.
func (p *Plan) repoSettingsFindings() ([]scan.Finding, error) {
	if p.TargetRepo == "" {
		return nil, nil
	}
	rt, err := builtin.Get(p.Runtime)
	if err != nil {
		return nil, nil
	}
	rc, ok := rt.(runtime.RepoChecker)
	if !ok {
		return nil, nil
	}
	r, err := openRepo(p.TargetRepo)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return rc.CheckRepo(repoReader{r}, runtime.RepoCheckInput{AgentName: p.AgentName, TrustRepoSettings: p.TrustRepoSettings})
}

// repoReader is runtime.RepoReader over repoFS.
type repoReader struct{ r *repoFS }

func (rr repoReader) ReadFile(rel string) ([]byte, bool, error) {
	data, err := rr.r.readFile(rel, maxContextFile)
	switch {
	case err == nil:
		return data, true, nil
	case errors.Is(err, fs.ErrNotExist), isRepoSymlink(err):
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("target repository: %w", err)
}

func (rr repoReader) IsDir(rel string) bool { return rr.r.isDir(rel) }

func (rr repoReader) Walk(rel string, fn func(rel string, read func() ([]byte, error)) error) error {
	return rr.r.walk(rel, func(rel string, d *os.Root, name string) error {
		return fn(rel, func() ([]byte, error) { return rr.r.readIn(d, name, rel, maxContextFile) })
	})
}

// judgeImports records the refused imports (scan.FollowImports findings,
// Path naming the importing file among files) as host-scan findings of
// that file, through the pipeline's Judge (acceptances, fail mode); the
// first block goes to *firstBlock.
func (x *execution) judgeImports(pl *scan.Pipeline, files []contextFile, refused []scan.Finding, firstBlock *error) error {
	byPath := map[string][]scan.Finding{}
	var order []string
	for _, f := range refused {
		if byPath[f.Path] == nil {
			order = append(order, f.Path)
		}
		byPath[f.Path] = append(byPath[f.Path], f)
	}
	for _, p := range order {
		var data []byte
		for _, f := range files {
			if f.loaded && f.display == p {
				data = f.data
			}
		}
		res, err := pl.Judge(data, scan.Meta{Path: p, Origin: scan.Local, Kind: "context"}, byPath[p])
		if err != nil {
			return fmt.Errorf("scanning %s: %w", p, err)
		}
		x.record("host_scan", res.Findings, res.Blocked)
		if res.Blocked && *firstBlock == nil {
			*firstBlock = &BlockedError{Phase: "host_scan", Err: res.Err()}
		}
	}
	return nil
}
