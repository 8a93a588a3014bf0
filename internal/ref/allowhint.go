package ref

import (
	"fmt"
	"strings"
)

// AllowHint is the fix for a URL refused by allowed_remote_resources: the
// exact lines that admit it, in the harness and in the org's config.yaml
// (whose list bounds the harness's). The prefix offered is the URL's
// repository (https://HOST/OWNER/REPO/) when its path has at least three
// segments, else its host.
func AllowHint(u string) string {
	p := SuggestPrefix(u)
	return fmt.Sprintf("to allow it, add `allowed_remote_resources: [%s]` to the harness and the same line to config.yaml (the org's list, which bounds the harness's)", p)
}

// SuggestPrefix is the allowed_remote_resources prefix AllowHint offers
// for u.
func SuggestPrefix(u string) string {
	rest, ok := strings.CutPrefix(u, "https://")
	if !ok {
		return u
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	segs := strings.Split(rest, "/")
	if len(segs) >= 4 && segs[1] != "" && segs[2] != "" {
		return "https://" + strings.Join(segs[:3], "/") + "/"
	}
	return "https://" + segs[0] + "/"
}
