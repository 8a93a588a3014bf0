// Package scaffold holds the files `fullsend init` writes: a fullsend dir
// with a commented config.yaml (every key at its default), one harness that
// runs as is with the script runtime in the local sandbox, its agent,
// skill, policy, schema and script. The files are embedded (files/); Write
// lays them out without ever overwriting a file unless asked to.
//
// Layout written into DIR:
//
//	config.yaml                      org settings; agents: registers harness/hello.yaml
//	harness/hello.yaml               the harness (runtime: script)
//	harness/hello.script.yaml        what the script runtime does (found beside the harness)
//	agents/hello.md                  agent definition
//	skills/hello/SKILL.md            a local skill
//	policies/hello.yaml              sandbox policy
//	schemas/hello-result.schema.json the result the agent must produce
package scaffold

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed files
var files embed.FS

// Harness is the scaffolded harness, relative to DIR.
const Harness = "harness/hello.yaml"

// AgentName is the name config.yaml registers the harness under.
const AgentName = "hello"

// ErrExists is returned by Write when files would be overwritten.
var ErrExists = errors.New("already exists")

// File is one scaffolded file.
type File struct {
	Path string // slash-separated, relative to DIR
	Data []byte
}

// Files lists the scaffolded files, sorted by path.
func Files() []File {
	var out []File
	err := fs.WalkDir(files, "files", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, File{Path: strings.TrimPrefix(p, "files/"), Data: data})
		return nil
	})
	if err != nil { // the embedded tree is fixed at build time
		panic("scaffold: " + err.Error())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Existing lists the scaffold paths (relative, slash-separated) that
// already exist under dir, in any form (file, directory, symlink).
func Existing(dir string) []string {
	var out []string
	for _, f := range Files() {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f.Path))); err == nil {
			out = append(out, f.Path)
		}
	}
	return out
}

// Write lays the scaffold out under dir (created when missing). Without
// force, it writes nothing when any scaffold file already exists and
// returns an error wrapping ErrExists naming them; with force, it replaces
// them. Every file is written to a temporary name and renamed into place
// through an os.Root of dir, so nothing outside dir is touched and a
// symlink in the way is replaced, never followed. It returns the paths
// written.
func Write(dir string, force bool) ([]string, error) {
	if !force {
		if ex := Existing(dir); len(ex) > 0 {
			return nil, fmt.Errorf("%s: %w: %s (use --force to overwrite)", dir, ErrExists, strings.Join(ex, ", "))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	defer root.Close()
	var written []string
	for _, f := range Files() {
		if err := writeFile(root, f); err != nil {
			return written, fmt.Errorf("%s: %w", filepath.Join(dir, filepath.FromSlash(f.Path)), err)
		}
		written = append(written, f.Path)
	}
	return written, nil
}

func writeFile(root *os.Root, f File) error {
	if d := path.Dir(f.Path); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	tmp := path.Join(path.Dir(f.Path), "."+path.Base(f.Path)+".fullsend-init")
	root.Remove(tmp) // a leftover of an interrupted init
	out, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = out.Write(f.Data)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, f.Path)
	}
	if err != nil {
		root.Remove(tmp)
	}
	return err
}
