//go:build linux

package guest

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM inside the sandbox: nothing an agent needs,
// everything that widens the kernel attack surface or escapes isolation.
// Names the running architecture does not have are skipped.
var deniedSyscalls = []string{
	"ptrace", "process_vm_readv", "process_vm_writev",
	"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"bpf", "perf_event_open", "userfaultfd", "fanotify_init",
	"keyctl", "add_key", "request_key",
	"unshare", "setns",
	"swapon", "swapoff", "reboot", "acct", "quotactl", "syslog", "vhangup",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
	"sethostname", "setdomainname", "iopl", "ioperm",
	"open_by_handle_at", "name_to_handle_at", "lookup_dcookie",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
}

// SocketFamilies are the address families socket(2) and socketpair(2)
// accept inside the sandbox: local sockets, IPv4, IPv6 (all confined by the
// network namespace and the egress proxy) and netlink (interface queries).
// Every other family — AF_VSOCK above all, which reaches the hypervisor and
// has no network namespace, but also AF_PACKET, AF_ALG, AF_XDP, … — fails
// with SocketFamilyErrno.
var SocketFamilies = []uint32{unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}

// SocketFamilyErrno is what socket(2) and socketpair(2) return for a family
// outside SocketFamilies: "address family not supported", which programs
// treat as an absent feature.
const SocketFamilyErrno = unix.EAFNOSUPPORT

// Filter profiles.
const (
	// ProfileAgent is applied to every agent command (and to the helpers
	// that touch agent files): nothing in deniedSyscalls.
	ProfileAgent = iota
	// ProfileSupervisor is the supervisor's: the same except mount(2),
	// which the pid 1 of each exec needs once for its /proc before it
	// applies ProfileAgent on top (seccomp filters stack; the stricter wins).
	ProfileSupervisor
	// ProfileSession is the docker backend's (the confine role): ProfileAgent
	// and setsid(2), so that nothing an exec starts can leave the exec's
	// session, the process tree the backend kills when the exec ends (a
	// container has no per-exec pid namespace, and without CAP_SYS_ADMIN
	// none can be made). setsid is the only way out of a session; programs
	// that detach (setsid(1), Node's and Bun's detached spawn) stay in it.
	ProfileSession
)

// sessionSyscalls are denied (EPERM) under ProfileSession only.
var sessionSyscalls = []string{"setsid"}

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retErrno = unix.SECCOMP_RET_ERRNO
)

// x32SyscallBit marks the x32 ABI on x86_64 (syscall numbers with it set).
const x32SyscallBit = 0x40000000

// seccomp_data layout: nr (4 bytes), arch (4), instruction pointer (8), args (6 × 8).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

// SeccompProgram returns the classic BPF program of a profile for the
// running architecture. It:
//
//   - answers ENOSYS to system calls of another ABI than the native one
//     (i386 through int 0x80 on x86_64, AArch32 on arm64, x32), so no
//     argument check can be bypassed through a different system call table;
//   - answers EPERM to deniedSyscalls (and sessionSyscalls under
//     ProfileSession) and to clone(2) with CLONE_NEWUSER;
//   - answers SocketFamilyErrno to socket(2) and socketpair(2) unless the
//     family — the low 32 bits of the first argument, which is all the
//     kernel reads — is in SocketFamilies;
//   - allows everything else.
func SeccompProgram(profile int) ([]bpf.Instruction, error) {
	return seccompProgram(runtime.GOARCH, profile)
}

func seccompProgram(goarch string, profile int) ([]bpf.Instruction, error) {
	info, err := arch.GetInfo(goarch)
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	if goarch == "s390x" || goarch == "s390" {
		// clone's flags are its second argument there; unsupported.
		return nil, fmt.Errorf("seccomp: architecture %s not supported", goarch)
	}
	lo := uint32(offArg0)
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		lo += 4 // big-endian: the low word is the second one
	}
	nr := func(name string) (uint32, bool) {
		n, ok := info.SyscallNames[name]
		return uint32(n | info.SeccompMask), ok
	}
	for _, name := range []string{"clone", "socket", "socketpair", "ptrace", "mount"} {
		if _, ok := nr(name); !ok {
			// Tables missing (the library lacks them for some architectures): fail closed.
			return nil, fmt.Errorf("seccomp: no system call table for %s", goarch)
		}
	}
	errno := func(e unix.Errno) bpf.Instruction { return bpf.RetConstant{Val: retErrno | uint32(e)} }
	allow := bpf.RetConstant{Val: retAllow}

	p := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		errno(unix.ENOSYS),
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	}
	if info.ID == arch.X86_64.ID {
		p = append(p,
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32SyscallBit, SkipFalse: 1},
			errno(unix.ENOSYS))
	}
	denied := deniedSyscalls
	if profile == ProfileSession {
		denied = append(append([]string{}, deniedSyscalls...), sessionSyscalls...)
	}
	for _, name := range denied {
		if profile == ProfileSupervisor && name == "mount" {
			continue
		}
		n, ok := nr(name)
		if !ok {
			continue
		}
		p = append(p, bpf.JumpIf{Cond: bpf.JumpEqual, Val: n, SkipFalse: 1}, errno(unix.EPERM))
	}
	// block is entered when the syscall number equals n; it must end in a
	// return, since it replaces the accumulator.
	guard := func(n uint32, block []bpf.Instruction) {
		p = append(p, bpf.JumpIf{Cond: bpf.JumpEqual, Val: n, SkipFalse: uint8(len(block))})
		p = append(p, block...)
	}
	cloneNr, _ := nr("clone")
	guard(cloneNr, []bpf.Instruction{
		bpf.LoadAbsolute{Off: lo, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: unix.CLONE_NEWUSER, SkipFalse: 1},
		errno(unix.EPERM),
		allow,
	})
	family := []bpf.Instruction{bpf.LoadAbsolute{Off: lo, Size: 4}}
	for i, f := range SocketFamilies {
		// Jump over the remaining comparisons and the refusal to "allow".
		family = append(family, bpf.JumpIf{Cond: bpf.JumpEqual, Val: f, SkipTrue: uint8(len(SocketFamilies) - i)})
	}
	family = append(family, errno(SocketFamilyErrno), allow)
	for _, name := range []string{"socket", "socketpair"} {
		n, _ := nr(name)
		guard(n, family)
	}
	return append(p, allow), nil
}

// loadSeccomp installs the profile's filter on every thread of the process
// (SECCOMP_FILTER_FLAG_TSYNC) after setting no_new_privs.
func loadSeccomp(profile int) error {
	prog, err := SeccompProgram(profile)
	if err != nil {
		return err
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return fmt.Errorf("seccomp: assemble: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(filter)
	if e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	if r != 0 {
		return fmt.Errorf("seccomp: thread %d could not be synchronised", r)
	}
	return nil
}
