package forge

import (
	"strings"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// RepoPrefix is the allowlist entry naming the repository of the forge
// URL u ("https://HOST/OWNER/REPO/", a GitLab group path included), or
// u's directory for a URL on no forge. `fullsend pin` prints it as the
// line an org adds; anomaly detection compares runs by it.
func RepoPrefix(u string, forges []config.Forge) string {
	loc, err := Parse(u, forges)
	if err != nil {
		d, _ := ref.DirURL(u)
		return d
	}
	c := loc.URL
	rest := strings.TrimPrefix(c, "https://")
	segs := strings.SplitN(rest, "/", 2)
	if len(segs) < 2 {
		return c + "/"
	}
	host, p := segs[0], segs[1]
	if i := strings.Index(p, "/-/"); i >= 0 && loc.Forge.Type == "gitlab" {
		return "https://" + host + "/" + p[:i] + "/"
	}
	parts := strings.SplitN(p, "/", 3)
	if len(parts) < 2 {
		return c + "/"
	}
	return "https://" + host + "/" + parts[0] + "/" + parts[1] + "/"
}
