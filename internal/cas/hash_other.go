//go:build !unix

package cas

import (
	"hash"
	"os"
)

func hashContent(f *os.File, _ int64, h hash.Hash, buf []byte) (int64, error) {
	return readHash(f, h, buf)
}
