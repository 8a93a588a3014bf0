package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/fetch"
)

// AtCommit reports whether the location names its ref by a full commit
// id. A branch or tag name may move, so what it served once says nothing
// about what it serves now.
func (l Location) AtCommit() bool { return isCommitID(l.Ref) }

// AtRef returns l with its ref replaced by gitRef (a commit id, say),
// validated like any parsed location.
func (l Location) AtRef(gitRef string) (Location, error) {
	l.Ref = gitRef
	return reparse(l, []config.Forge{l.Forge})
}

// ResolveCommit returns the commit id the location's ref names now: the
// ref itself when it is a commit id (no request), else one API request
// (GitHub GET /repos/O/R/commits/REF with the sha media type, GitLab GET
// /projects/ID/repository/commits/REF). The answer must be a full commit
// id.
func (c *Client) ResolveCommit(ctx context.Context, loc Location) (string, error) {
	loc, err := c.settle(loc)
	if err != nil {
		return "", err
	}
	if loc.AtCommit() {
		return strings.ToLower(loc.Ref), nil
	}
	var id string
	switch loc.Forge.Type {
	case "github":
		var b []byte
		b, err = c.get(ctx, loc.Forge, c.githubRepoAPI(loc)+"/commits/"+escapeSeg(loc.Ref), "application/vnd.github.sha", true)
		id = strings.TrimSpace(string(b))
	default:
		var b []byte
		b, err = c.get(ctx, loc.Forge, c.gitlabProjectAPI(loc)+"/repository/commits/"+escapeSeg(loc.Ref), "", true)
		if err == nil {
			var v struct {
				ID string `json:"id"`
			}
			if jerr := json.Unmarshal(b, &v); jerr != nil {
				err = fmt.Errorf("decoding the commit of %q: %v", loc.Ref, jerr)
			}
			id = v.ID
		}
	}
	if err != nil {
		// GitHub answers an unknown ref with 422 ("No commit found for
		// SHA"), GitLab with 404: both mean the ref names no commit.
		var se *fetch.StatusError
		if errors.As(err, &se) && (se.StatusCode == http.StatusNotFound || se.StatusCode == http.StatusUnprocessableEntity) {
			err = fmt.Errorf("%w: no branch, tag or commit %q in %s/%s (%w)", ErrNotFound, loc.Ref, loc.Owner, loc.Repo, err)
		}
		return "", &Error{URL: loc.URL, Err: err}
	}
	if !isCommitID(id) {
		return "", &Error{URL: loc.URL, Err: fmt.Errorf("the forge answered %.80q for the commit of %q, not a commit id", id, loc.Ref)}
	}
	return strings.ToLower(id), nil
}
