package resolve

import (
	"context"
	"fmt"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/fetch"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// Pinned is what Pin found: the reference to write in a harness.
type Pinned struct {
	// Ref is URL#sha256=SHA256, ready to paste.
	Ref    string     `json:"ref"`
	URL    string     `json:"url"`
	SHA256 ref.Digest `json:"sha256"`
	Type   cas.Type   `json:"type"`
	// Commit is the commit a forge branch or tag named when it was pinned
	// (URL then names that commit instead).
	Commit string `json:"commit,omitempty"`
}

// Pin fetches u (an https URL without a pin, or with one it ignores) under
// cfg's fetch policy and returns its pinned reference: the file's sha256,
// or a forge tree's tree hash (cas.TreeHash). A forge URL naming a branch
// or tag is first resolved to the commit it names now, and the content is
// fetched at that commit, so the pin and the URL agree and cannot move.
// Nothing is cached or scanned: resolve scans the content when a harness
// uses the reference. tweak is NewNetwork's (tests).
func Pin(ctx context.Context, cfg *config.Config, getenv func(string) string, tweak func(*fetch.Options), u string) (*Pinned, error) {
	rf, err := ref.Parse(u)
	if err != nil {
		return nil, err
	}
	if rf.Kind != ref.URL {
		return nil, fmt.Errorf("%s: pin takes an https URL", u)
	}
	fc := fetch.New(fetchOptions(cfg, tweak))
	loc, err := forge.Parse(rf.URL, cfg.Forges)
	if err != nil {
		// A plain https file.
		resp, err := fc.Get(ctx, rf.URL, nil)
		if err != nil {
			return nil, err
		}
		d := ref.SHA256(resp.Body)
		return &Pinned{Ref: rf.URL + "#sha256=" + string(d), URL: rf.URL, SHA256: d, Type: cas.TypeFile}, nil
	}
	fg := forge.New(fc, cfg.Forges, getenv)
	p := &Pinned{}
	if !loc.AtCommit() {
		commit, err := fg.ResolveCommit(ctx, loc)
		if err != nil {
			return nil, err
		}
		if loc, err = loc.AtRef(commit); err != nil {
			return nil, err
		}
		p.Commit = commit
	}
	p.URL = loc.URL
	if loc.Kind == forge.Tree {
		files, err := fg.FetchTree(ctx, loc)
		if err != nil {
			return nil, err
		}
		if p.SHA256, err = cas.TreeHash(files); err != nil {
			return nil, fmt.Errorf("%s: %w", loc.URL, err)
		}
		p.Type = cas.TypeDirectory
	} else {
		b, err := fg.FetchFile(ctx, loc)
		if err != nil {
			return nil, err
		}
		p.SHA256, p.Type = ref.SHA256(b), cas.TypeFile
	}
	p.Ref = p.URL + "#sha256=" + string(p.SHA256)
	return p, nil
}
