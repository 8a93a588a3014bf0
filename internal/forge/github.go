package forge

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// GitHub REST v3. A directory is listed with one git trees call on the ref
// (GET /repos/O/R/git/trees/REF?recursive=1, the whole repository, filtered
// to the requested path prefix here), falling back to walking the contents
// API (GET /repos/O/R/contents/PATH?ref=REF) when GitHub reports the
// listing truncated. Blobs come from /git/blobs/SHA with the raw media type.

func (c *Client) githubRepoAPI(loc Location) string {
	return strings.TrimSuffix(loc.Forge.APIURL, "/") + "/repos/" + escapeSeg(loc.Owner) + "/" + escapeSeg(loc.Repo)
}

type ghTreeEntry struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
	Type string `json:"type"`
	SHA  string `json:"sha"`
	Size int64  `json:"size"`
}

type ghTree struct {
	Tree      []ghTreeEntry `json:"tree"`
	Truncated bool          `json:"truncated"`
}

// treeCall is one recursive tree listing, shared by every FetchTree of the
// same repository and ref on a Client: a graph with twenty skills of one
// repo@commit lists the repository once, not twenty times.
type treeCall struct {
	done chan struct{}
	tree *ghTree
	err  error
}

// githubListing returns the recursive listing at u, requesting it at most
// once per Client for a commit id and at most once at a time for another
// ref. A listing that failed is forgotten (the next caller asks again);
// callers already waiting on it get its error.
func (c *Client) githubListing(ctx context.Context, loc Location, u string) (*ghTree, error) {
	c.treeMu.Lock()
	if tc, ok := c.trees[u]; ok {
		c.treeMu.Unlock()
		select {
		case <-tc.done:
			return tc.tree, tc.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	tc := &treeCall{done: make(chan struct{})}
	if c.trees == nil {
		c.trees = map[string]*treeCall{}
	}
	c.trees[u] = tc
	c.treeMu.Unlock()

	body, err := c.get(ctx, loc.Forge, u, "application/vnd.github+json", true)
	if err == nil {
		var t ghTree
		if jerr := json.Unmarshal(body, &t); jerr != nil {
			err = fmt.Errorf("decoding the tree listing: %v", jerr)
		} else {
			tc.tree = &t
		}
	}
	tc.err = err
	// Only a commit id names the same tree forever; a branch or tag listing
	// is shared by concurrent callers only.
	if err != nil || !isCommitID(loc.Ref) {
		c.treeMu.Lock()
		delete(c.trees, u)
		c.treeMu.Unlock()
	}
	close(tc.done)
	return tc.tree, tc.err
}

func (c *Client) githubTree(ctx context.Context, loc Location) (map[string][]byte, error) {
	u := c.githubRepoAPI(loc) + "/git/trees/" + escapeSeg(loc.Ref) + "?recursive=1"
	t, err := c.githubListing(ctx, loc, u)
	if err != nil {
		return nil, err
	}
	var files []file
	if t.Truncated {
		files, err = c.githubContents(ctx, loc)
	} else {
		files, err = githubFilter(loc, t.Tree)
	}
	if err != nil {
		return nil, err
	}
	if err := c.checkListing(files); err != nil {
		return nil, err
	}
	return c.download(ctx, files, func(ctx context.Context, f file) ([]byte, error) {
		return c.githubBlob(ctx, loc, f.sha)
	})
}

// githubFilter keeps the entries below loc.Path and refuses symlinks and
// submodules there.
func githubFilter(loc Location, entries []ghTreeEntry) ([]file, error) {
	prefix := ""
	if loc.Path != "" {
		prefix = loc.Path + "/"
	}
	found := loc.Path == ""
	var files []file
	for _, e := range entries {
		if loc.Path != "" && e.Path == loc.Path {
			if e.Type != "tree" {
				return nil, fmt.Errorf("%w: %s is a %s at %s, not a directory", ErrKind, loc.Path, e.Type, loc.Ref)
			}
			found = true
			continue
		}
		rel, ok := strings.CutPrefix(e.Path, prefix)
		if !ok || rel == "" {
			continue
		}
		found = true
		var err error
		files, err = addEntry(files, e.Type, e.Mode, file{rel: rel, full: e.Path, sha: strings.ToLower(e.SHA), size: e.Size})
		if err != nil {
			return nil, err
		}
	}
	if !found {
		return nil, fmt.Errorf("%w: no directory %q at %s", ErrNotFound, loc.Path, loc.Ref)
	}
	return files, nil
}

type ghContent struct {
	Type        string  `json:"type"`
	Name        string  `json:"name"`
	Path        string  `json:"path"`
	SHA         string  `json:"sha"`
	Size        int64   `json:"size"`
	DownloadURL *string `json:"download_url"`
	GitURL      *string `json:"git_url"`
}

// githubContents walks the directory with the contents API, one request per
// directory (at most MaxListRequests).
func (c *Client) githubContents(ctx context.Context, loc Location) ([]file, error) {
	prefix := ""
	if loc.Path != "" {
		prefix = loc.Path + "/"
	}
	var files []file
	queue := []string{loc.Path}
	for n := 0; len(queue) > 0; n++ {
		if n >= MaxListRequests {
			return nil, fmt.Errorf("%w: more than %d directories", ErrTooMany, MaxListRequests)
		}
		dir := queue[0]
		queue = queue[1:]
		u := c.githubRepoAPI(loc) + "/contents"
		if dir != "" {
			u += "/" + escapeSegs(dir)
		}
		u += "?ref=" + queryEscape(loc.Ref)
		body, err := c.get(ctx, loc.Forge, u, "application/vnd.github+json", true)
		if err != nil {
			return nil, err
		}
		var entries []ghContent
		if err := json.Unmarshal(body, &entries); err != nil {
			if bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
				return nil, fmt.Errorf("%w: %s is not a directory at %s", ErrKind, dir, loc.Ref)
			}
			return nil, fmt.Errorf("decoding the contents listing of %q: %v", dir, err)
		}
		for _, e := range entries {
			full := e.Name
			if dir != "" {
				full = dir + "/" + e.Name
			}
			if e.Name == "" || strings.Contains(e.Name, "/") || e.Path != full {
				return nil, fmt.Errorf("listing of %q returned an entry outside it (%q)", dir, e.Path)
			}
			rel := strings.TrimPrefix(full, prefix)
			switch e.Type {
			case "dir":
				queue = append(queue, full)
			case "symlink":
				return nil, fmt.Errorf("%w: %s", ErrSymlink, rel)
			case "submodule":
				return nil, fmt.Errorf("%w: %s", ErrSubmodule, rel)
			case "file":
				// Submodules are listed as "file" for compatibility; they
				// have no download URL and a git URL naming a tree.
				if e.DownloadURL == nil || (e.GitURL != nil && strings.Contains(*e.GitURL, "/git/trees/")) {
					return nil, fmt.Errorf("%w: %s", ErrSubmodule, rel)
				}
				files = append(files, file{rel: rel, full: full, sha: strings.ToLower(e.SHA), size: e.Size})
			default:
				return nil, fmt.Errorf("%s: unsupported contents entry type %q", rel, e.Type)
			}
			if len(files) > MaxTreeFiles {
				return nil, fmt.Errorf("%w: more than %d files", ErrTooMany, MaxTreeFiles)
			}
		}
	}
	return files, nil
}

// githubBlob downloads one blob. It asks for the raw media type; a server
// answering the JSON envelope instead is decoded. The caller verifies the
// SHA-1, so a wrong guess can only fail.
func (c *Client) githubBlob(ctx context.Context, loc Location, sha string) ([]byte, error) {
	b, err := c.get(ctx, loc.Forge, c.githubRepoAPI(loc)+"/git/blobs/"+sha, "application/vnd.github.raw+json", true)
	if err != nil {
		return nil, err
	}
	if gitBlobSHA1(b) == sha {
		return b, nil
	}
	var env struct {
		SHA      string `json:"sha"`
		Content  string `json:"content"`
		Encoding string `json:"encoding"`
	}
	if json.Unmarshal(b, &env) == nil && env.Encoding == "base64" && strings.EqualFold(env.SHA, sha) {
		if dec, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(env.Content, "\n", "")); err == nil {
			return dec, nil
		}
	}
	return b, nil
}

// isCommitID reports whether ref is a full SHA-1 or SHA-256 commit id.
func isCommitID(ref string) bool {
	if len(ref) != 40 && len(ref) != 64 {
		return false
	}
	for i := 0; i < len(ref); i++ {
		if c := ref[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
