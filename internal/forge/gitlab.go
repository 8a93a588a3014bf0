package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// GitLab REST v4. A directory is listed with the repository tree API
// (GET /projects/ID/repository/tree?path=P&ref=R&recursive=true&per_page=100,
// following X-Next-Page for at most MaxListPages pages); files come from the
// raw file API (GET /projects/ID/repository/files/PATH/raw?ref=R) and are
// verified against the blob id of the listing. ID is the URL-encoded
// "namespace/project".

func (c *Client) gitlabProjectAPI(loc Location) string {
	return strings.TrimSuffix(loc.Forge.APIURL, "/") + "/projects/" + escapeSeg(loc.Owner+"/"+loc.Repo)
}

func (c *Client) gitlabRawURL(loc Location, path string) string {
	return c.gitlabProjectAPI(loc) + "/repository/files/" + escapeSeg(path) + "/raw?ref=" + queryEscape(loc.Ref)
}

type glEntry struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	Path string `json:"path"`
	Mode string `json:"mode"`
}

func (c *Client) gitlabTree(ctx context.Context, loc Location) (map[string][]byte, error) {
	base := c.gitlabProjectAPI(loc) + "/repository/tree?"
	if loc.Path != "" {
		base += "path=" + queryEscape(loc.Path) + "&"
	}
	base += "ref=" + queryEscape(loc.Ref) + "&recursive=true&per_page=100"
	prefix := ""
	if loc.Path != "" {
		prefix = loc.Path + "/"
	}
	var files []file
	for page := 1; ; page++ {
		if page > MaxListPages {
			return nil, fmt.Errorf("%w: more than %d pages", ErrTooMany, MaxListPages)
		}
		resp, err := c.getResponse(ctx, loc.Forge, base+"&page="+strconv.Itoa(page), "", true)
		if err != nil {
			return nil, err
		}
		var entries []glEntry
		if err := json.Unmarshal(resp.Body, &entries); err != nil {
			return nil, fmt.Errorf("decoding the tree listing (page %d): %v", page, err)
		}
		for _, e := range entries {
			rel, ok := strings.CutPrefix(e.Path, prefix)
			if !ok || rel == "" {
				return nil, fmt.Errorf("listing of %q returned an entry outside it (%q)", loc.Path, e.Path)
			}
			if files, err = addEntry(files, e.Type, e.Mode, file{rel: rel, full: e.Path, sha: strings.ToLower(e.ID)}); err != nil {
				return nil, err
			}
		}
		next := resp.Header.Get("X-Next-Page")
		if next == "" {
			break
		}
		if n, err := strconv.Atoi(next); err != nil || n != page+1 {
			return nil, fmt.Errorf("tree listing: unexpected X-Next-Page %q after page %d", next, page)
		}
	}
	if err := c.checkListing(files); err != nil {
		return nil, err
	}
	return c.download(ctx, files, func(ctx context.Context, f file) ([]byte, error) {
		return c.get(ctx, loc.Forge, c.gitlabRawURL(loc, f.full), "", true)
	})
}
