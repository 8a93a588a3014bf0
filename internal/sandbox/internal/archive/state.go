package archive

import (
	"archive/tar"
	"fmt"
	"io"
	"path"
	"strings"
)

// ErrUnderTooLarge (which wraps ErrTooLarge) is Filter's error when the
// files below StateOptions.Under add up to more than UnderBytes.
var ErrUnderTooLarge = fmt.Errorf("%w below a bounded directory", ErrTooLarge)

// StateOptions bound one snapshot stream (see Filter).
type StateOptions struct {
	// WritableDirs gives every directory owner rwx (a restore: an
	// extraction that is not root must be able to fill a directory the
	// agent had made read-only; package archive's Extract does the same).
	WritableDirs bool
	// Locked, with WritableDirs, is called for each directory whose
	// recorded mode lacked owner rwx (name "./rel", that mode), so that
	// it can be given back after the extraction.
	Locked func(name string, mode int64)
	// Bytes bounds the regular files' content in total (ErrTooLarge).
	Bytes int64
	// Entries bounds the regular files and directories (ErrTooMany).
	Entries int
	// Under bounds the content below one subdirectory ("output") to
	// UnderBytes, when both are set (ErrTooLarge).
	Under      string
	UnderBytes int64
}

// Filter copies the tar stream r of a sandbox tree (entry names relative
// to its root, "./x" or "x"; untrusted) to w as the canonical stream a
// snapshot keeps: directories and regular files only, in stream order,
// named "./rel" (the root "."), with permission bits (no setuid, setgid
// or sticky), size and modification time and nothing else (no owner, no
// link). Names are checked as Extract checks them (ErrUnsafePath);
// entries at or below a path of skip (relative, slash-separated) are left
// out; the limits are checked before an entry is written. It returns the
// number of content bytes written.
func Filter(r io.Reader, w io.Writer, skip []string, lim StateOptions) (int64, error) {
	tr := tar.NewReader(r)
	tw := tar.NewWriter(w)
	var total, under int64
	entries := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return total, tw.Close()
		}
		if err != nil {
			return total, err
		}
		name, err := cleanName(strings.TrimPrefix(h.Name, "./"))
		if err != nil {
			return total, err
		}
		if skipped(name, skip) || (h.Typeflag != tar.TypeDir && h.Typeflag != tar.TypeReg) {
			continue
		}
		if name == "." && h.Typeflag != tar.TypeDir {
			return total, fmt.Errorf("%w: the root entry is not a directory", ErrUnsafePath)
		}
		if entries++; lim.Entries > 0 && entries > lim.Entries {
			return total, fmt.Errorf("%w: more than %d files and directories", ErrTooMany, lim.Entries)
		}
		out := &tar.Header{Typeflag: h.Typeflag, Mode: h.Mode & 0o777, ModTime: h.ModTime.Truncate(1e9), Format: tar.FormatPAX}
		if name == "." {
			out.Name = "./"
		} else {
			out.Name = "./" + name
		}
		if h.Typeflag == tar.TypeDir {
			if lim.WritableDirs && out.Mode&0o700 != 0o700 {
				if lim.Locked != nil {
					lim.Locked(out.Name, out.Mode)
				}
				out.Mode |= 0o700
			}
			if name != "." {
				out.Name += "/"
			}
			if err := tw.WriteHeader(out); err != nil {
				return total, err
			}
			continue
		}
		if h.Size < 0 || (lim.Bytes > 0 && h.Size > lim.Bytes-total) {
			return total, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, lim.Bytes)
		}
		if lim.Under != "" && lim.UnderBytes > 0 && strings.HasPrefix(name, lim.Under+"/") {
			if h.Size > lim.UnderBytes-under {
				return total, fmt.Errorf("%w: more than %d bytes below %s", ErrUnderTooLarge, lim.UnderBytes, lim.Under)
			}
			under += h.Size
		}
		total += h.Size
		out.Size = h.Size
		if err := tw.WriteHeader(out); err != nil {
			return total, err
		}
		if _, err := io.CopyN(tw, tr, h.Size); err != nil {
			return total, err
		}
	}
}

// skipped reports whether name is one of skip or below one.
func skipped(name string, skip []string) bool {
	for _, s := range skip {
		s = path.Clean(s)
		if name == s || strings.HasPrefix(name, s+"/") {
			return true
		}
	}
	return false
}

// CleanScript is a POSIX sh script (busybox sh runs it) that empties the
// directory $1 except the paths given as the further arguments (absolute,
// below $1): each entry that is not one of them and holds none of them is
// removed (a read-only directory made writable first: the agent's
// own chmod a-w does not stop a restore); one that holds some is entered
// and cleaned the same way. It prepares a sandbox tree for the
// extraction of a snapshot.
const CleanScript = `root=$1; shift
keep=$(printf '%s\n' "$@")
gone() {
  if [ -d "$1" ] && [ ! -L "$1" ]; then chmod -R u+w -- "$1" 2>/dev/null; fi
  rm -rf -- "$1"
}
clean() {
  for f in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    if [ ! -e "$f" ] && [ ! -L "$f" ]; then continue; fi
    act=rm
    while IFS= read -r s; do
      if [ -z "$s" ]; then continue; fi
      if [ "$f" = "$s" ]; then act=keep; break; fi
      case "$s" in "$f"/*) act=enter;; esac
    done <<EOF
$keep
EOF
    case $act in
    rm) gone "$f" || exit 1;;
    enter) if [ -d "$f" ] && [ ! -L "$f" ]; then clean "$f" || exit 1; else gone "$f" || exit 1; fi;;
    esac
  done
}
clean "$root"
`
