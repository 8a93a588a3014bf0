//go:build linux

package local

import (
	"encoding/json"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/fullsend-ai/fullsend/internal/sandbox/local/guest"
)

func send(c *net.UnixConn, m guest.Message, files ...*os.File) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(b) > guest.MaxMessage {
		return fmt.Errorf("control message too large (%d bytes)", len(b))
	}
	_, _, err = c.WriteMsgUnix(b, guest.Rights(files), nil)
	return err
}

func recv(c *net.UnixConn) (guest.Message, []*os.File, error) {
	buf := make([]byte, guest.MaxMessage)
	oob := make([]byte, unix.CmsgSpace(4*64))
	n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return guest.Message{}, nil, err
	}
	return guest.Decode(buf[:n], oob[:oobn])
}

// socketPair returns a connected SOCK_SEQPACKET pair: the first end as a
// *net.UnixConn, the second as a file to hand to a child.
func socketPair() (*net.UnixConn, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	f0 := os.NewFile(uintptr(fds[0]), "ctl")
	f1 := os.NewFile(uintptr(fds[1]), "ctl-child")
	c, err := fileConn(f0)
	f0.Close()
	if err != nil {
		f1.Close()
		return nil, nil, err
	}
	return c, f1, nil
}

func fileConn(f *os.File) (*net.UnixConn, error) {
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("control socket: not a unix socket")
	}
	return uc, nil
}
