package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// maxImportedFile bounds a file reached through an @import.
const maxImportedFile = 4 << 20

// importFindings are the refused imports of one file, with its content
// (what acceptances bind to).
type importFindings struct {
	path     string
	data     []byte
	findings []scan.Finding
}

// contextImports follows the @imports of the context files of dir (files:
// the paths contextFiles listed; those outside dir are skipped) with
// scan.FollowImports, the resolver the host scan of `fullsend run` uses.
// Targets are read through an os.Root on dir, so none outside it is ever
// read. It returns the paths of the files reached that are not already
// listed, and the findings of imports that leave dir, per importing file.
func contextImports(dir string, files []string) ([]string, []importFindings, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("scan context %s: %w", dir, err)
	}
	defer root.Close()
	read := func(rel string) ([]byte, error) {
		f, err := root.Open(filepath.FromSlash(rel))
		if err != nil {
			if errors.Is(err, syscall.ENOTDIR) {
				return nil, fmt.Errorf("%w: %v", fs.ErrNotExist, err)
			}
			return nil, err // missing: skipped; out of the root through a symlink: refused
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file: %w", rel, fs.ErrNotExist)
		}
		return limit.ReadAll(f, maxImportedFile)
	}
	var in []scan.ImportFile
	for _, p := range files {
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		data, err := read(filepath.ToSlash(rel))
		if err != nil {
			continue // scanned (and reported) as a listed file
		}
		in = append(in, scan.ImportFile{Rel: filepath.ToSlash(rel), Data: data})
	}
	got, findings, err := scan.FollowImports(filepath.ToSlash(abs), in, read)
	if err != nil {
		return nil, nil, fmt.Errorf("scan context %s: %w", dir, err)
	}
	var out []string
	content := map[string][]byte{}
	for _, f := range in {
		content[f.Rel] = f.Data
	}
	for _, g := range got {
		out = append(out, filepath.Join(dir, filepath.FromSlash(g.Rel)))
		content[g.Rel] = g.Data
	}
	var refused []importFindings
	for _, f := range findings {
		rel := f.Path
		f.Path = filepath.Join(dir, filepath.FromSlash(rel))
		if n := len(refused); n > 0 && refused[n-1].path == f.Path {
			refused[n-1].findings = append(refused[n-1].findings, f)
			continue
		}
		refused = append(refused, importFindings{path: f.Path, data: content[rel], findings: []scan.Finding{f}})
	}
	return out, refused, nil
}
