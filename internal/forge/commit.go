package forge

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// ResolveCommit asks the forge API which commit the location's ref (a
// branch, a tag or a commit id) names now, and returns the full 40-hex
// commit id, lower-case. GitHub: GET /repos/O/R/commits/REF; GitLab: GET
// /projects/ID/repository/commits/REF. The request goes through the same
// client (SSRF rules, limits, retries, the forge's token) as every other
// forge request. Errors are *Error.
func (c *Client) ResolveCommit(ctx context.Context, loc Location) (string, error) {
	loc, err := c.settle(loc)
	if err != nil {
		return "", err
	}
	var u, accept string
	switch loc.Forge.Type {
	case "github":
		u = c.githubRepoAPI(loc) + "/commits/" + escapeSeg(loc.Ref)
		accept = "application/vnd.github+json"
	default:
		u = c.gitlabProjectAPI(loc) + "/repository/commits/" + escapeSeg(loc.Ref)
	}
	b, err := c.get(ctx, loc.Forge, u, accept, true)
	if err != nil {
		return "", &Error{URL: loc.URL, Err: err}
	}
	var v struct {
		SHA string `json:"sha"` // GitHub
		ID  string `json:"id"`  // GitLab
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return "", &Error{URL: loc.URL, Err: fmt.Errorf("decoding the commit of %q: %v", loc.Ref, err)}
	}
	id := v.SHA
	if loc.Forge.Type != "github" {
		id = v.ID
	}
	id = strings.ToLower(id)
	if !isSHA1(id) {
		return "", &Error{URL: loc.URL, Err: fmt.Errorf("the forge answered %q for the commit of %q, not a 40-hex commit id", id, loc.Ref)}
	}
	return id, nil
}
