//go:build linux

package local

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/fullsend-ai/fullsend/internal/sandbox/local/guest"
)

// idmapper builds idmapped mounts (run as root only). The agent runs as a
// dedicated unprivileged host uid H, so a root-owned workspace would be
// unwritable; an idmapped mount shows the source's owner O as H inside the
// sandbox, and whatever the agent creates is owned by O on the host.
type idmapper struct {
	initPid          int
	hostUID, hostGID int
	holders          []*exec.Cmd
	stdins           []io.Closer
	userns           map[[2]int]*os.File
}

func (m *idmapper) close() {
	for _, f := range m.userns {
		f.Close()
	}
	for _, c := range m.stdins {
		c.Close()
	}
	for _, h := range m.holders {
		h.Process.Kill()
		h.Wait()
	}
}

// usernsFor returns a user namespace mapping (uid, gid) to the agent's host ids.
func (m *idmapper) usernsFor(uid, gid int) (*os.File, error) {
	if m.userns == nil {
		m.userns = map[[2]int]*os.File{}
	}
	k := [2]int{uid, gid}
	if f := m.userns[k]; f != nil {
		return f, nil
	}
	var pid int
	if uid == 0 && gid == 0 {
		pid = m.initPid // the sandbox's own namespace maps 0 -> H already
	} else {
		h := exec.Command("/proc/self/exe", "fullsend-sandbox-hold")
		h.Env = []string{guest.EnvRole + "=hold"}
		in, err := h.StdinPipe()
		if err != nil {
			return nil, err
		}
		h.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: m.hostUID, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: m.hostGID, Size: 1}},
			Pdeathsig:   syscall.SIGKILL,
		}
		if err := h.Start(); err != nil {
			return nil, fmt.Errorf("userns holder: %w", err)
		}
		m.holders = append(m.holders, h)
		m.stdins = append(m.stdins, in)
		pid = h.Process.Pid
	}
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/user")
	if err != nil {
		return nil, err
	}
	m.userns[k] = f
	return f, nil
}

// mount returns a detached, idmapped (and possibly read-only) copy of src.
func (m *idmapper) mount(src string, st os.FileInfo, ro, idmap bool) (*os.File, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("open_tree: %w", err)
	}
	f := os.NewFile(uintptr(fd), src)
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if idmap {
		sys := st.Sys().(*syscall.Stat_t)
		ns, err := m.usernsFor(int(sys.Uid), int(sys.Gid))
		if err != nil {
			f.Close()
			return nil, err
		}
		attr.Attr_set |= unix.MOUNT_ATTR_IDMAP
		attr.Userns_fd = uint64(ns.Fd())
	}
	if ro {
		attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
	}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, attr); err != nil {
		f.Close()
		return nil, fmt.Errorf("idmapped mount (file system must support idmapped mounts): %w", err)
	}
	return f, nil
}
