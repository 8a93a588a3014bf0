//go:build linux

package guest

import (
	"encoding/binary"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompData lays out struct seccomp_data of a little-endian machine for
// the x/net/bpf VM, whose 32-bit loads are big-endian: every word is at its
// native offset (the low half of a 64-bit argument first), encoded
// big-endian, so the VM reads the value the kernel would.
func seccompData(nr int, id arch.AuditArch, args ...uint64) []byte {
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[0:], uint32(nr))
	binary.BigEndian.PutUint32(data[4:], uint32(id))
	for i, v := range args {
		binary.BigEndian.PutUint32(data[16+8*i:], uint32(v))
		binary.BigEndian.PutUint32(data[20+8*i:], uint32(v>>32))
	}
	return data
}

// run evaluates a program on one system call the way the kernel does.
func run(t *testing.T, vm *bpf.VM, a *arch.Info, nr int, args ...uint64) uint32 {
	t.Helper()
	r, err := vm.Run(seccompData(nr, a.ID, args...))
	if err != nil {
		t.Fatal(err)
	}
	return uint32(r)
}

func vmFor(t *testing.T, goarch string, profile int) *bpf.VM {
	t.Helper()
	prog, err := seccompProgram(goarch, profile)
	if err != nil {
		t.Fatal(err)
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

const allow = unix.SECCOMP_RET_ALLOW

func errnoRet(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

func TestSeccompSocketFamilies(t *testing.T) {
	for _, c := range []struct {
		goarch string
		info   *arch.Info
	}{{"amd64", arch.X86_64}, {"arm64", arch.AARCH64}} {
		vm := vmFor(t, c.goarch, ProfileAgent)
		allowed := map[uint64]bool{unix.AF_UNIX: true, unix.AF_INET: true, unix.AF_INET6: true, unix.AF_NETLINK: true}
		for _, call := range []string{"socket", "socketpair"} {
			nr := c.info.SyscallNames[call]
			for fam := uint64(0); fam < 64; fam++ {
				want := errnoRet(SocketFamilyErrno)
				if allowed[fam] {
					want = allow
				}
				if got := run(t, vm, c.info, nr, fam, unix.SOCK_STREAM, 0); got != want {
					t.Errorf("%s %s(family %d) = %#x, want %#x", c.goarch, call, fam, got, want)
				}
			}
			// The kernel reads an int: the high word is ignored, by us too.
			if got := run(t, vm, c.info, nr, 1<<32|unix.AF_INET); got != allow {
				t.Errorf("%s %s(AF_INET with high bits) = %#x", c.goarch, call, got)
			}
			if got := run(t, vm, c.info, nr, 1<<32|unix.AF_VSOCK); got != errnoRet(SocketFamilyErrno) {
				t.Errorf("%s %s(AF_VSOCK with high bits) = %#x", c.goarch, call, got)
			}
		}
	}
}

func TestSeccompDenials(t *testing.T) {
	a := arch.X86_64
	agent, super := vmFor(t, "amd64", ProfileAgent), vmFor(t, "amd64", ProfileSupervisor)
	for _, name := range deniedSyscalls {
		nr, ok := a.SyscallNames[name]
		if !ok {
			t.Errorf("%s: not an x86_64 system call", name)
			continue
		}
		if got := run(t, agent, a, nr); got != errnoRet(unix.EPERM) {
			t.Errorf("agent %s = %#x, want EPERM", name, got)
		}
		want := errnoRet(unix.EPERM)
		if name == "mount" {
			want = allow
		}
		if got := run(t, super, a, nr); got != want {
			t.Errorf("supervisor %s = %#x, want %#x", name, got, want)
		}
	}
	clone := a.SyscallNames["clone"]
	for _, c := range []struct {
		flags uint64
		want  uint32
	}{
		{uint64(unix.SIGCHLD), allow},
		{unix.CLONE_NEWPID | unix.CLONE_NEWNS | uint64(unix.SIGCHLD), allow},
		{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD), errnoRet(unix.EPERM)},
		{unix.CLONE_NEWUSER | unix.CLONE_NEWPID, errnoRet(unix.EPERM)},
	} {
		if got := run(t, agent, a, clone, c.flags); got != c.want {
			t.Errorf("clone(%#x) = %#x, want %#x", c.flags, got, c.want)
		}
	}
	for _, name := range []string{"read", "write", "openat", "execve", "clone3", "kill"} {
		if got := run(t, agent, a, a.SyscallNames[name]); got != allow {
			t.Errorf("%s = %#x, want allow", name, got)
		}
	}
	// Another ABI: i386 through int 0x80, and x32.
	if r, _ := agent.Run(seccompData(arch.I386.SyscallNames["socketcall"], arch.I386.ID, 1, 0)); uint32(r) != errnoRet(unix.ENOSYS) {
		t.Errorf("i386 socketcall = %#x, want ENOSYS", r)
	}
	if got := run(t, agent, a, arch.X32.SyscallNames["socket"]|arch.X32.SeccompMask, unix.AF_VSOCK); got != errnoRet(unix.ENOSYS) {
		t.Errorf("x32 socket = %#x, want ENOSYS", got)
	}
}

func TestSeccompUnsupportedArchFailsClosed(t *testing.T) {
	for _, goarch := range []string{"s390x", "ppc64le", "nonesuch"} {
		if _, err := seccompProgram(goarch, ProfileAgent); err == nil {
			t.Errorf("%s: program built without system call tables", goarch)
		}
	}
}

func TestParseExitStatus(t *testing.T) {
	for in, want := range map[string]int{"exit 0": 0, "exit 3": 3, "signal 9": 137, "signal 15": 143} {
		if got, ok := parseExitStatus(in); !ok || got != want {
			t.Errorf("%q = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "exit", "oops 1"} {
		if _, ok := parseExitStatus(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// Issue 26 item 4: under ProfileSession (the docker backend's commands)
// setsid(2) fails with EPERM, so an exec's session holds everything it
// starts; the local backend's profiles leave it alone (each exec has a pid
// namespace there). Everything else answers as under ProfileAgent.
func TestSeccompSessionProfile(t *testing.T) {
	for _, c := range []struct {
		goarch string
		info   *arch.Info
	}{{"amd64", arch.X86_64}, {"arm64", arch.AARCH64}} {
		agent, sess, sup := vmFor(t, c.goarch, ProfileAgent), vmFor(t, c.goarch, ProfileSession), vmFor(t, c.goarch, ProfileSupervisor)
		setsid := c.info.SyscallNames["setsid"]
		if got := run(t, sess, c.info, setsid); got != errnoRet(unix.EPERM) {
			t.Errorf("%s ProfileSession setsid = %#x, want EPERM", c.goarch, got)
		}
		for name, vm := range map[string]*bpf.VM{"agent": agent, "supervisor": sup} {
			if got := run(t, vm, c.info, setsid); got != allow {
				t.Errorf("%s %s setsid = %#x, want allowed", c.goarch, name, got)
			}
		}
		for _, name := range []string{"setpgid", "getsid", "ptrace", "unshare", "socket", "clone", "read"} {
			nr := c.info.SyscallNames[name]
			for _, args := range [][]uint64{{unix.AF_VSOCK}, {unix.AF_INET}, {unix.CLONE_NEWUSER}, {0}} {
				if a, s := run(t, agent, c.info, nr, args...), run(t, sess, c.info, nr, args...); a != s {
					t.Errorf("%s %s(%v): agent %#x, session %#x", c.goarch, name, args, a, s)
				}
			}
		}
	}
}
