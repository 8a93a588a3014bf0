package archive

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/openflag"
)

// MaxBytes bounds the content extracted from one stream (8 GiB).
const MaxBytes int64 = 8 << 30

// ErrUnsafePath is returned for entries that would escape the destination.
var ErrUnsafePath = errors.New("unsafe path in archive")

// Write streams src (a file or a directory tree) as a tar to w. The root
// entry is named ".".
func Write(w io.Writer, src string) error {
	tw := tar.NewWriter(w)
	st, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if st.Mode().IsRegular() {
		if err := addFile(tw, src, ".", st); err != nil {
			return err
		}
		return tw.Close()
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: not a regular file or directory", src)
	}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := "./" + filepath.ToSlash(rel)
		if rel == "." {
			name = "."
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case info.IsDir():
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: int64(info.Mode().Perm()), ModTime: info.ModTime()})
		case info.Mode().IsRegular():
			return addFile(tw, p, name, info)
		}
		return nil // symlinks and special files are skipped
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

func addFile(tw *tar.Writer, p, name string, info fs.FileInfo) error {
	f, err := os.OpenFile(p, os.O_RDONLY|openflag.NoFollow, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(info.Mode().Perm()), Size: info.Size(), ModTime: info.ModTime()}); err != nil {
		return err
	}
	_, err = io.CopyN(tw, f, info.Size())
	return err
}

// ErrTooLarge is returned when the regular files of a stream add up to more
// than the extraction limit.
var ErrTooLarge = errors.New("archive larger than the limit")

// ErrTooMany is returned when a stream holds more regular files and
// directories than the extraction limit.
var ErrTooMany = errors.New("archive holds more entries than the limit")

// Extract reads a tar stream from r into dest. A root entry "." of type
// directory makes dest a directory; of type file makes dest that file.
// Existing files are replaced. uid/gid >= 0 chown what is created. It stops
// at MaxBytes.
func Extract(r io.Reader, dest string, uid, gid int) error {
	return ExtractLimit(r, dest, uid, gid, MaxBytes, 0)
}

// ExtractLimit is Extract with the total size of regular files bounded by
// max (<= 0 or above MaxBytes: MaxBytes) and, when maxEntries > 0, the
// number of regular files and directories (the root included) bounded by
// maxEntries. A file that would take the total past max fails with an
// error wrapping ErrTooLarge before any of its bytes is written, an entry
// past maxEntries with one wrapping ErrTooMany before it is created; what
// was extracted before stays (see ExtractStaged).
func ExtractLimit(r io.Reader, dest string, uid, gid int, max int64, maxEntries int) error {
	if max <= 0 || max > MaxBytes {
		max = MaxBytes
	}
	tr := tar.NewReader(r)
	var total int64
	entries := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		clean, err := cleanName(h.Name)
		if err != nil {
			return err
		}
		target := dest
		if clean != "." {
			target = filepath.Join(dest, filepath.FromSlash(clean))
		}
		mode := os.FileMode(h.Mode).Perm()
		if h.Typeflag == tar.TypeDir || h.Typeflag == tar.TypeReg {
			if entries++; maxEntries > 0 && entries > maxEntries {
				return fmt.Errorf("%w: more than %d files and directories", ErrTooMany, maxEntries)
			}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			os.Chmod(target, mode|0o700)
			chown(target, uid, gid)
		case tar.TypeReg:
			if h.Size < 0 || h.Size > max-total {
				return fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)
			}
			total += h.Size
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if st, err := os.Lstat(target); err == nil && !st.Mode().IsRegular() {
				if st.IsDir() {
					return fmt.Errorf("%s: is a directory", target)
				}
				os.Remove(target)
			}
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|openflag.NoFollow, mode|0o600)
			if err != nil {
				return err
			}
			if _, err := io.CopyN(f, tr, h.Size); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			os.Chmod(target, mode)
			chown(target, uid, gid)
		default:
			// skipped
		}
	}
}

// cleanName checks the name of a tar entry (no NUL, not absolute, no
// ".." element) and returns it cleaned, relative to the stream's root
// ("." for the root itself).
func cleanName(name string) (string, error) {
	n := strings.TrimSuffix(name, "/")
	if strings.ContainsRune(n, 0) || strings.HasPrefix(n, "/") {
		return "", fmt.Errorf("%w: %q", ErrUnsafePath, name)
	}
	for _, seg := range strings.Split(n, "/") {
		if seg == ".." {
			return "", fmt.Errorf("%w: %q", ErrUnsafePath, name)
		}
	}
	return path.Clean(n), nil
}

func chown(p string, uid, gid int) {
	if uid >= 0 {
		os.Lchown(p, uid, gid)
	}
}

// ExtractStaged extracts r (as ExtractLimit, files owned by the caller,
// bounded by max bytes and maxEntries files and directories) into
// a staging directory beside dest and moves the result to dest only when the
// whole stream was extracted, so a failure leaves nothing new at dest. A
// missing dest is created (parents too); an existing directory dest receives
// the tree merged into it (same-named files replaced); an existing file is
// replaced. A stream without entries leaves dest untouched.
func ExtractStaged(r io.Reader, dest string, max int64, maxEntries int) error {
	parent := filepath.Dir(dest)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	stage, err := os.MkdirTemp(parent, ".fullsend-stage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	tmp := filepath.Join(stage, "root")
	if err := ExtractLimit(r, tmp, -1, -1, max, maxEntries); err != nil {
		return err
	}
	if _, err := os.Lstat(tmp); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return commit(tmp, dest)
}

// commit moves src to dst: a rename when dst is absent or a file, a merge
// entry by entry when both are directories.
func commit(src, dst string) error {
	sst, err := os.Lstat(src)
	if err != nil {
		return err
	}
	dst0, err := os.Lstat(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return os.Rename(src, dst)
	case err != nil:
		return err
	case dst0.IsDir() && sst.IsDir():
		ents, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := commit(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
				return err
			}
		}
		return nil
	case dst0.IsDir():
		return fmt.Errorf("%s: is a directory", dst)
	case sst.IsDir():
		return fmt.Errorf("%s: not a directory", dst)
	}
	return os.Rename(src, dst)
}

// WriteNamed writes hostPath as Write does, with the root entry renamed to
// base (and every entry below it to base/…), so that `tar -x -C PARENT` in
// a sandbox recreates it at PARENT/base.
func WriteNamed(w io.Writer, hostPath, base string) error {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(Write(pw, hostPath)) }()
	err := rename(tar.NewReader(pr), w, func(name string) string {
		name = strings.TrimPrefix(strings.TrimPrefix(name, "."), "/")
		if name == "" {
			return base
		}
		return base + "/" + name
	})
	if err != nil {
		pr.CloseWithError(err)
	}
	return err
}

// ReceiveTar extracts at hostPath (with ExtractStaged: staged, bounded by
// limit bytes and maxEntries files and directories, nothing left behind on
// failure) the tar stream that produce writes to w — a `tar -c -C PARENT
// BASE` run in a sandbox, whose root entry is renamed to ".". produce
// returns the command's exit status and stderr. An extraction over a
// limit wraps ErrTooLarge or ErrTooMany; otherwise a failure to run comes
// first, then a non-zero exit, then an extraction error.
func ReceiveTar(hostPath string, limit int64, maxEntries int, produce func(w io.Writer) (exit int, stderr string, err error)) error {
	pr, pw := io.Pipe()
	xerr := make(chan error, 1)
	go func() {
		tpr, tpw := io.Pipe()
		go func() { tpw.CloseWithError(rootToDot(tar.NewReader(pr), tpw)) }()
		err := ExtractStaged(tpr, hostPath, limit, maxEntries)
		if err != nil {
			// Stop the producer: its output copy fails and the command is killed.
			tpr.CloseWithError(err)
			pr.CloseWithError(err)
		} else {
			io.Copy(io.Discard, tpr)
			io.Copy(io.Discard, pr)
		}
		xerr <- err
	}()
	code, stderr, err := produce(pw)
	pw.Close()
	xe := <-xerr
	switch {
	case errors.Is(xe, ErrTooLarge), errors.Is(xe, ErrTooMany):
		return xe
	case err != nil:
		return err
	case code != 0:
		return fmt.Errorf("tar exit %d: %s", code, stderr)
	}
	return xe
}

// rootToDot renames the stream's root entry to "." (and its children to
// "./…"), the form ExtractStaged expects.
func rootToDot(tr *tar.Reader, w io.Writer) error {
	return rename(tr, w, func(name string) string {
		n := strings.TrimPrefix(strings.TrimSuffix(name, "/"), "./")
		if i := strings.IndexByte(n, '/'); i >= 0 {
			return "./" + n[i+1:]
		}
		return "."
	})
}

// rename copies the tar stream tr to w with every entry renamed by newName.
func rename(tr *tar.Reader, w io.Writer, newName func(name string) string) error {
	tw := tar.NewWriter(w)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return tw.Close()
		}
		if err != nil {
			return err
		}
		h.Name = newName(h.Name)
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
}
