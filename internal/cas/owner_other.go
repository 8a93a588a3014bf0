//go:build !unix

package cas

import "os"

// secureDir: no portable owner or mode bits here; the directory's ACLs are
// the operator's business.
func secureDir(string, os.FileInfo) error { return nil }
