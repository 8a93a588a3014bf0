//go:build linux

package guest

import (
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The oracle below is written from the kernel's own system call tables
// (arch/x86/entry/syscalls/syscall_64.tbl for x86_64,
// include/uapi/asm-generic/unistd.h for arm64) and the audit architecture
// values of include/uapi/linux/audit.h, not from deniedSyscalls nor from
// the seccomp library's name tables: dropping a name from the production
// deny list, or a library table that maps a name to the wrong number, fails
// TestSeccompOracle.

const (
	auditArchX8664   arch.AuditArch = 0xC000003E
	auditArchAArch64 arch.AuditArch = 0xC00000B7
)

// oracleCall is one system call with its number on x86_64 and arm64
// (-1: the architecture has no such call).
type oracleCall struct {
	name         string
	amd64, arm64 int
}

// oracleRefused must fail with EPERM under ProfileAgent: they escape or
// widen the sandbox (mounts, namespaces, modules, BPF, io_uring, keyrings,
// other processes' memory, host clocks and names, raw I/O ports).
var oracleRefused = []oracleCall{
	{"ptrace", 101, 117},
	{"process_vm_readv", 310, 270},
	{"process_vm_writev", 311, 271},
	{"mount", 165, 40},
	{"umount2", 166, 39},
	{"pivot_root", 155, 41},
	{"chroot", 161, 51},
	{"open_tree", 428, 428},
	{"move_mount", 429, 429},
	{"fsopen", 430, 430},
	{"fsconfig", 431, 431},
	{"fsmount", 432, 432},
	{"fspick", 433, 433},
	{"mount_setattr", 442, 442},
	{"kexec_load", 246, 104},
	{"kexec_file_load", 320, 294},
	{"init_module", 175, 105},
	{"finit_module", 313, 273},
	{"delete_module", 176, 106},
	{"bpf", 321, 280},
	{"perf_event_open", 298, 241},
	{"userfaultfd", 323, 282},
	{"fanotify_init", 300, 262},
	{"add_key", 248, 217},
	{"request_key", 249, 218},
	{"keyctl", 250, 219},
	{"unshare", 272, 97},
	{"setns", 308, 268},
	{"swapon", 167, 224},
	{"swapoff", 168, 225},
	{"reboot", 169, 142},
	{"acct", 163, 89},
	{"quotactl", 179, 60},
	{"syslog", 103, 116},
	{"vhangup", 153, 58},
	{"settimeofday", 164, 170},
	{"clock_settime", 227, 112},
	{"clock_adjtime", 305, 266},
	{"adjtimex", 159, 171},
	{"sethostname", 170, 161},
	{"setdomainname", 171, 162},
	{"iopl", 172, -1},
	{"ioperm", 173, -1},
	{"name_to_handle_at", 303, 264},
	{"open_by_handle_at", 304, 265},
	{"lookup_dcookie", 212, 18},
	{"io_uring_setup", 425, 425},
	{"io_uring_enter", 426, 426},
	{"io_uring_register", 427, 427},
}

// oracleAllowed must pass under ProfileAgent: what every program needs.
var oracleAllowed = []oracleCall{
	{"read", 0, 63},
	{"write", 1, 64},
	{"close", 3, 57},
	{"mmap", 9, 222},
	{"execve", 59, 221},
	{"exit_group", 231, 94},
	{"openat", 257, 56},
	{"clone3", 435, 435},
	{"kill", 62, 129},
}

func TestSeccompOracle(t *testing.T) {
	t.Parallel()
	for _, a := range []struct {
		goarch string
		audit  arch.AuditArch
		nr     func(oracleCall) int
	}{
		{"amd64", auditArchX8664, func(c oracleCall) int { return c.amd64 }},
		{"arm64", auditArchAArch64, func(c oracleCall) int { return c.arm64 }},
	} {
		agent := vmFor(t, a.goarch, ProfileAgent)
		session := vmFor(t, a.goarch, ProfileSession)
		super := vmFor(t, a.goarch, ProfileSupervisor)
		check := func(vm *bpf.VM, profile string, c oracleCall, want uint32) {
			t.Helper()
			nr := a.nr(c)
			if nr < 0 {
				return
			}
			r, err := vm.Run(seccompData(nr, a.audit))
			if err != nil {
				t.Fatal(err)
			}
			if uint32(r) != want {
				t.Errorf("%s %s %s (nr %d) = %#x, want %#x", a.goarch, profile, c.name, nr, r, want)
			}
		}
		for _, c := range oracleRefused {
			check(agent, "agent", c, errnoRet(unix.EPERM))
			check(session, "session", c, errnoRet(unix.EPERM))
			if c.name != "mount" { // the supervisor mounts its /proc
				check(super, "supervisor", c, errnoRet(unix.EPERM))
			}
		}
		for _, c := range oracleAllowed {
			check(agent, "agent", c, allow)
		}
	}
}
