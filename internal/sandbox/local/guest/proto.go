//go:build linux

package guest

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Control messages between the host, the sandbox init and the supervisor.
// They travel as JSON over SOCK_SEQPACKET socket pairs (one Message per
// packet), with file descriptors attached through SCM_RIGHTS.
type Message struct {
	Op string `json:"op"`
	ID uint64 `json:"id,omitempty"`

	// host -> init
	Config *InitConfig `json:"config,omitempty"`

	// host -> supervisor
	Args      []string `json:"args,omitempty"`
	Env       []string `json:"env,omitempty"`
	Cwd       string   `json:"cwd,omitempty"`
	TimeoutNS int64    `json:"timeout_ns,omitempty"`
	Path      string   `json:"path,omitempty"`

	// replies
	Exit     int    `json:"exit,omitempty"`
	TimedOut bool   `json:"timed_out,omitempty"`
	Err      string `json:"err,omitempty"`
}

type MountConfig struct {
	Source   string `json:"source,omitempty"` // bound by path when FD < 0
	Target   string `json:"target"`
	ReadOnly bool   `json:"ro"`
	IsDir    bool   `json:"dir"`
	// FD is the index of an attached detached mount (open_tree, possibly
	// idmapped), attached with move_mount; -1 = bind Source by path.
	FD int `json:"fd"`
}

type InitConfig struct {
	ID     string        `json:"id"`
	Exe    MountConfig   `json:"exe"`
	Mounts []MountConfig `json:"mounts"`
	Proxy  bool          `json:"proxy"`
	// SandboxBytes and TmpBytes size the /sandbox and /tmp tmpfs mounts.
	SandboxBytes int64       `json:"sandbox_bytes"`
	TmpBytes     int64       `json:"tmp_bytes"`
	Super        SuperConfig `json:"super"`
	// Home is how many of the last descriptors are the cgroup.procs files
	// of the sandbox's own groups, handed to the supervisor.
	Home int `json:"home"`
}

// SuperConfig is what the supervisor (and each exec's pid 1) needs; it is
// passed in their environment (it holds no secret).
type SuperConfig struct {
	RO []string `json:"ro"`
	RW []string `json:"rw"`
	// Per-command rlimits: RLIMIT_FSIZE always (the workspace bound),
	// RLIMIT_NPROC and RLIMIT_AS when no cgroup enforces pids and memory.
	FSize     uint64 `json:"fsize,omitempty"`
	Nproc     uint64 `json:"nproc,omitempty"`
	AS        uint64 `json:"as,omitempty"`
	NoHarden  bool   `json:"no_harden,omitempty"`
	AgentUID  int    `json:"uid"`
	AgentGID  int    `json:"gid"`
	ProxyPort int    `json:"proxy_port,omitempty"`
}

// MaxMessage bounds one control message.
const MaxMessage = 1 << 20

// conn is a SOCK_SEQPACKET control socket used with raw system calls: the
// guest roles avoid package net so that they start before the heavy package
// initialisers of the fullsend binary run.
type conn struct {
	fd int
	mu sync.Mutex
}

func (c *conn) send(m Message, files ...*os.File) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return unix.Sendmsg(c.fd, b, Rights(files), nil, 0)
}

func (c *conn) recv() (Message, []*os.File, error) {
	buf := make([]byte, MaxMessage)
	oob := make([]byte, unix.CmsgSpace(4*64))
	var n, oobn int
	var err error
	for {
		n, oobn, _, _, err = unix.Recvmsg(c.fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return Message{}, nil, err
	}
	return Decode(buf[:n], oob[:oobn])
}

// Rights is the control message that attaches files to a packet
// (SCM_RIGHTS); nil when there are none.
func Rights(files []*os.File) []byte {
	if len(files) == 0 {
		return nil
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	return unix.UnixRights(fds...)
}

// Decode is the Message in one received packet and the files its control
// data oob carried. An empty packet means the peer closed the channel. On
// an error the files are closed.
func Decode(packet, oob []byte) (Message, []*os.File, error) {
	files := ParseRights(oob)
	if len(packet) == 0 {
		CloseAll(files)
		return Message{}, nil, fmt.Errorf("control channel closed")
	}
	var m Message
	if err := json.Unmarshal(packet, &m); err != nil {
		CloseAll(files)
		return Message{}, nil, fmt.Errorf("bad control message: %w", err)
	}
	return m, files, nil
}

// ParseRights returns the descriptors carried by a control message.
func ParseRights(oob []byte) []*os.File {
	var files []*os.File
	if len(oob) == 0 {
		return nil
	}
	scms, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	for _, s := range scms {
		fds, err := unix.ParseUnixRights(&s)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			unix.CloseOnExec(fd)
			files = append(files, os.NewFile(uintptr(fd), "passed"))
		}
	}
	return files
}

// CloseAll closes every non-nil file.
func CloseAll(fs []*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
