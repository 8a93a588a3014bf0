package cas

// This file defines the tree hash and which tree paths are safe. Both are
// security-relevant: pins depend on the hash byte for byte, and a path that
// passes CheckTreePath becomes a file name under the cache. Change with care
// and keep doc.go in step.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

// Limits on tree paths. Longer names cannot be created on common filesystems,
// so they are rejected before anything is written.
const (
	MaxTreePathLen    = 4096 // bytes in a whole tree path
	MaxTreeSegmentLen = 255  // bytes in one path segment
)

// ErrUnsafePath is matched by every *PathError.
var ErrUnsafePath = errors.New("unsafe tree path")

// ErrEmptyTree is returned by TreeHash for a tree without files.
var ErrEmptyTree = errors.New("tree has no files")

// PathError reports a tree path that CheckTreePath or CheckTreePaths rejects.
type PathError struct {
	Path   string
	Reason string
}

func (e *PathError) Error() string { return fmt.Sprintf("tree path %q: %s", e.Path, e.Reason) }

// Is makes errors.Is(err, ErrUnsafePath) true.
func (e *PathError) Is(target error) bool { return target == ErrUnsafePath }

// CheckTreePath reports whether p may name a file inside a tree: a relative
// "/"-separated path of at most MaxTreePathLen bytes, valid UTF-8, whose
// segments are non-empty, not "." or "..", at most MaxTreeSegmentLen bytes,
// and free of NUL, backslash, newline and other control characters. A path
// that passes can be joined below a directory without escaping it.
func CheckTreePath(p string) error {
	bad := func(reason string) error { return &PathError{Path: p, Reason: reason} }
	switch {
	case p == "":
		return bad("empty")
	case len(p) > MaxTreePathLen:
		return bad(fmt.Sprintf("longer than %d bytes", MaxTreePathLen))
	case !utf8.ValidString(p):
		return bad("not valid UTF-8")
	case p[0] == '/':
		return bad("absolute")
	}
	for _, r := range p {
		switch {
		case r == 0:
			return bad("contains NUL")
		case r == '\\':
			return bad("contains a backslash")
		case r == '\n' || r == '\r':
			return bad("contains a line break")
		case unicode.IsControl(r):
			return bad(fmt.Sprintf("contains control character %U", r))
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch {
		case seg == "":
			return bad("has an empty segment")
		case seg == ".":
			return bad(`has a "." segment`)
		case seg == "..":
			return bad(`has a ".." segment`)
		case len(seg) > MaxTreeSegmentLen:
			return bad(fmt.Sprintf("has a segment longer than %d bytes", MaxTreeSegmentLen))
		}
	}
	return nil
}

// CheckTreePaths checks every path with CheckTreePath, then rejects a set
// in which two paths are equal under Unicode simple case folding, or in which
// one path is also a parent directory of another. The input is not modified.
func CheckTreePaths(paths []string) error {
	type node struct {
		orig  string
		isDir bool
	}
	seen := make(map[string]node, len(paths)*2)
	for _, p := range paths {
		if err := CheckTreePath(p); err != nil {
			return err
		}
	}
	for _, p := range paths {
		// Parent directories first, so "a" and "a/b" collide in either order.
		for i := 0; i < len(p); i++ {
			if p[i] != '/' {
				continue
			}
			dir := p[:i]
			k := fold(dir)
			if n, ok := seen[k]; ok {
				if !n.isDir {
					return &PathError{Path: p, Reason: fmt.Sprintf("has parent %q, which is also a file", n.orig)}
				}
				if n.orig != dir {
					return &PathError{Path: p, Reason: fmt.Sprintf("directory %q differs from %q only in case", dir, n.orig)}
				}
				continue
			}
			seen[k] = node{orig: dir, isDir: true}
		}
		k := fold(p)
		if n, ok := seen[k]; ok {
			switch {
			case n.isDir:
				return &PathError{Path: p, Reason: fmt.Sprintf("is a file and also the directory %q", n.orig)}
			case n.orig == p:
				return &PathError{Path: p, Reason: "appears twice"}
			default:
				return &PathError{Path: p, Reason: fmt.Sprintf("differs from %q only in case", n.orig)}
			}
		}
		seen[k] = node{orig: p}
	}
	return nil
}

// fold maps s to a canonical representative of its Unicode simple case
// folding orbit (each rune becomes the smallest rune of its orbit), so two
// strings that differ only in case fold to the same key.
func fold(s string) string {
	// ASCII: the smallest rune of a letter's orbit is its upper case
	// ('K' < 'k' < U+212A KELVIN SIGN, 'S' < 's' < U+017F LONG S); other
	// ASCII runes fold to themselves.
	lower := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return foldUnicode(s)
		}
		lower = lower || ('a' <= c && c <= 'z')
	}
	if !lower {
		return s
	}
	return strings.ToUpper(s)
}

// foldUnicode is fold for any string.
func foldUnicode(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}

// TreeHash returns the tree hash (see the package doc) of files, a map from
// tree path to content. Unsafe paths (CheckTreePaths) and empty trees are
// rejected.
func TreeHash(files map[string][]byte) (ref.Digest, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	if err := CheckTreePaths(paths); err != nil {
		return "", err
	}
	tf := make([]TreeFile, 0, len(files))
	for _, p := range paths {
		tf = append(tf, TreeFile{Path: p, SHA256: ref.SHA256(files[p]), Size: int64(len(files[p]))})
	}
	return treeHashOf(tf)
}

// treeHashOf hashes the lines of already-checked files. It sorts a copy.
func treeHashOf(files []TreeFile) (ref.Digest, error) {
	if len(files) == 0 {
		return "", ErrEmptyTree
	}
	n := 0
	for _, f := range files {
		n += len(f.Path) + 1 + len(f.SHA256) + 1
	}
	text := make([]byte, 0, n)
	lines := make([][]byte, len(files))
	for i, f := range files {
		start := len(text)
		text = append(text, f.Path...)
		text = append(text, ':')
		text = append(text, f.SHA256...)
		text = append(text, '\n')
		lines[i] = text[start:len(text):len(text)]
	}
	slices.SortFunc(lines, bytes.Compare)
	h := sha256.New()
	for _, l := range lines {
		h.Write(l)
	}
	var sum [sha256.Size]byte
	return ref.Digest(hex.EncodeToString(h.Sum(sum[:0]))), nil
}
