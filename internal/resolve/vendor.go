package resolve

import (
	"errors"
	"fmt"
)

// ErrVendorTampered: a file `fullsend vendor` copied into the fullsend dir
// no longer hashes to what lock.yaml recorded for it.
var ErrVendorTampered = errors.New("vendored file does not match lock.yaml")

// checkVendored refuses a resolution that uses a vendored file (a path
// listed under vendor: in the lock file) whose bytes no longer hash to
// the recorded sha256, with or without --frozen: a vendored script is
// remote code kept locally, and only the copy that was fetched, verified
// and scanned may run.
func (r *resolver) checkVendored(res *Result) error {
	if r.o.Lock == nil || len(r.o.Lock.Vendor) == 0 {
		return nil
	}
	for _, n := range res.Graph.Nodes {
		if n.Remote {
			continue
		}
		id := lockID(n, res.Root)
		v := r.o.Lock.FindVendored(id)
		if v != nil && v.SHA256 != string(n.SHA256) {
			return fmt.Errorf("%s (%s): %w: it hashes to sha256 %s, vendored from %s as %s; restore it with `fullsend vendor --update %s`",
				id, n.Field, ErrVendorTampered, n.SHA256, v.URL, v.SHA256, res.Source)
		}
	}
	return nil
}
