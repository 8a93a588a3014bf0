package archive

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
)

// filtered runs Filter on entries and returns the names and modes kept.
func filtered(t *testing.T, skip []string, lim StateOptions, entries ...tar.Header) (map[string]int64, error) {
	t.Helper()
	var out bytes.Buffer
	_, err := Filter(tarOf(t, entries...), &out, skip, lim)
	got := map[string]int64{}
	tr := tar.NewReader(&out)
	for {
		h, rerr := tr.Next()
		if rerr != nil {
			break
		}
		if h.Uid != 0 || h.Uname != "" || h.Linkname != "" {
			t.Errorf("%s: owner or link kept: %+v", h.Name, h)
		}
		io.Copy(io.Discard, tr)
		got[h.Name] = h.Mode
	}
	return got, err
}

func TestFilterKeepsFilesAndDirectoriesOnly(t *testing.T) {
	got, err := filtered(t, []string{"owned", "workspace/.env"}, StateOptions{},
		tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755},
		tar.Header{Typeflag: tar.TypeDir, Name: "./workspace/", Mode: 0o700},
		tar.Header{Typeflag: tar.TypeReg, Name: "./workspace/a", Mode: 0o6755, Uid: 7, Uname: "x"},
		tar.Header{Typeflag: tar.TypeReg, Name: "workspace/.env", Mode: 0o600},
		tar.Header{Typeflag: tar.TypeReg, Name: "./owned/k", Mode: 0o600},
		tar.Header{Typeflag: tar.TypeSymlink, Name: "./ln", Linkname: "/etc"},
		tar.Header{Typeflag: tar.TypeLink, Name: "./hard", Linkname: "workspace/a"},
		tar.Header{Typeflag: tar.TypeChar, Name: "./null", Devmajor: 1, Devminor: 3},
		tar.Header{Typeflag: tar.TypeFifo, Name: "./fifo"},
	)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"./": 0o755, "./workspace/": 0o700, "./workspace/a": 0o755}
	if len(got) != len(want) {
		t.Fatalf("kept %v, want %v", got, want)
	}
	for n, m := range want {
		if got[n] != m {
			t.Errorf("%s: mode %o, want %o (kept %v)", n, got[n], m, got)
		}
	}
}

func TestFilterRefuses(t *testing.T) {
	for _, name := range []string{"../x", "./a/../../x", "/etc/x"} {
		_, err := filtered(t, nil, StateOptions{}, tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644})
		if !errors.Is(err, ErrUnsafePath) {
			t.Errorf("%q: %v, want ErrUnsafePath", name, err)
		}
	}
	if _, err := filtered(t, nil, StateOptions{}, tar.Header{Typeflag: tar.TypeReg, Name: ".", Mode: 0o644}); !errors.Is(err, ErrUnsafePath) {
		t.Errorf("a file as root: %v", err)
	}
	reg := func(n string) tar.Header { return tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644} } // 1 byte each (tarOf)
	if _, err := filtered(t, nil, StateOptions{Bytes: 2}, reg("./a"), reg("./b"), reg("./c")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("past Bytes: %v", err)
	}
	if _, err := filtered(t, nil, StateOptions{Entries: 2}, reg("./a"), reg("./b"), reg("./c")); !errors.Is(err, ErrTooMany) {
		t.Errorf("past Entries: %v", err)
	}
	lim := StateOptions{Under: "output", UnderBytes: 1}
	if _, err := filtered(t, nil, lim, reg("./a"), reg("./b"), reg("./output/x")); err != nil {
		t.Errorf("within UnderBytes: %v", err)
	}
	if _, err := filtered(t, nil, lim, reg("./output/x"), reg("./output/y")); !errors.Is(err, ErrUnderTooLarge) || !errors.Is(err, ErrTooLarge) {
		t.Errorf("past UnderBytes: %v", err)
	}
}

func TestFilterWritableDirs(t *testing.T) {
	var locked []string
	got, err := filtered(t, nil, StateOptions{WritableDirs: true, Locked: func(n string, m int64) { locked = append(locked, fmt.Sprintf("%s %o", n, m)) }},
		tar.Header{Typeflag: tar.TypeDir, Name: "./open/", Mode: 0o755},
		tar.Header{Typeflag: tar.TypeDir, Name: "./locked/", Mode: 0o555},
		tar.Header{Typeflag: tar.TypeReg, Name: "./locked/f", Mode: 0o444})
	if err != nil || got["./locked/"] != 0o755 || got["./locked/f"] != 0o444 || got["./open/"] != 0o755 {
		t.Fatalf("%v %v", err, got)
	}
	if len(locked) != 1 || locked[0] != "./locked 555" {
		t.Fatalf("locked %q", locked)
	}
}
