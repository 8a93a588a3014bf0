//go:build linux

package guest

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pair is a connected SOCK_SEQPACKET pair of conns.
func pair(t *testing.T) (*conn, *conn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return &conn{fd: fds[0]}, &conn{fd: fds[1]}
}

// TestMessageWithFiles: a Message and its files (Rights) arrive whole
// (Decode), the files readable on the other side.
func TestMessageWithFiles(t *testing.T) {
	a, b := pair(t)
	f, err := os.CreateTemp(t.TempDir(), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("payload")
	if err := a.send(Message{Op: "exec", ID: 7, Args: []string{"true"}}, f, f); err != nil {
		t.Fatal(err)
	}
	m, files, err := b.recv()
	if err != nil {
		t.Fatal(err)
	}
	defer CloseAll(files)
	if m.Op != "exec" || m.ID != 7 || len(m.Args) != 1 || m.Args[0] != "true" {
		t.Errorf("message %+v", m)
	}
	if len(files) != 2 {
		t.Fatalf("%d files, want 2", len(files))
	}
	buf := make([]byte, 16)
	if n, _ := files[1].ReadAt(buf, 0); string(buf[:n]) != "payload" {
		t.Errorf("passed file holds %q", buf[:n])
	}
	if Rights(nil) != nil {
		t.Error("Rights of no files is not nil")
	}
}

// TestDecodeRefuses: an empty packet is a closed channel, a packet that is
// not a Message is refused, and either way the attached files are closed.
func TestDecodeRefuses(t *testing.T) {
	for _, tc := range []struct{ packet, want string }{
		{"", "control channel closed"},
		{"{not json", "bad control message: "},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		// The rights are parsed from our own control message: Decode owns
		// (and must close) the descriptor duplicated for it.
		dup, err := unix.Dup(int(w.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		_, files, err := Decode([]byte(tc.packet), unix.UnixRights(dup))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || files != nil {
			t.Errorf("Decode(%q) = %v, %v; want %q", tc.packet, files, err, tc.want)
		}
		// With every write end closed, the read end sees EOF at once.
		r.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := r.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("Decode(%q) left the passed file open", tc.packet)
		}
	}
}
