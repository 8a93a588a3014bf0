package scan

import (
	"crypto/sha256"
	"encoding/hex"
)

// Judge decides findings made about content outside the scanners (the
// import resolver's, FollowImports) exactly as Scan decides its own: they
// carry content's hash, reviewed acceptances apply, they block in fail
// mode closed and go to the findings log.
func (p *Pipeline) Judge(content []byte, m Meta, fs []Finding) (*Result, error) {
	if len(fs) == 0 {
		return &Result{}, nil
	}
	sum := sha256.Sum256(content)
	return p.finish(append([]Finding(nil), fs...), hex.EncodeToString(sum[:]), m)
}
