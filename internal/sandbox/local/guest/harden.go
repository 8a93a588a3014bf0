package guest

import (
	"fmt"
	"os"
	"strings"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// deniedSyscalls fail with EPERM inside the sandbox: nothing an agent needs,
// everything that widens the kernel attack surface or escapes isolation.
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

func SeccompFilter() seccomp.Filter {
	return seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{
				{Names: deniedSyscalls, Action: seccomp.ActionErrno},
				{
					// clone(CLONE_NEWUSER); clone3 cannot be filtered by flags and
					// is covered by user.max_user_namespaces=0 set by the init.
					NamesWithCondtions: []seccomp.NameWithConditions{{
						Name:       "clone",
						Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: unix.CLONE_NEWUSER}},
					}},
					Action: seccomp.ActionErrno,
				},
			},
		},
	}
}

// harden applies, in order: rlimits, Landlock (which sets no_new_privs on
// every thread) and a seccomp filter synchronised to every thread.
func harden(cfg SuperConfig) error {
	unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	// RLIMIT_NPROC and RLIMIT_AS (the fallbacks when no cgroup enforces
	// pids and memory) are not applied here: a Go supervisor under them could
	// not create threads or reserve its heap. Each command gets them through
	// the "limit" role (see limitExec).
	if cfg.NoHarden {
		return nil
	}
	if err := landlockRestrict(cfg); err != nil {
		return err
	}
	if err := seccomp.LoadFilter(SeccompFilter()); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}

func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func splitDirs(paths []string) (dirs, files []string) {
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		if st.IsDir() {
			dirs = append(dirs, p)
		} else {
			files = append(files, p)
		}
	}
	return dirs, files
}

func landlockRestrict(cfg SuperConfig) error {
	roDirs, roFiles := splitDirs(append([]string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/dev", "/run", "/var"}, cfg.RO...))
	rwDirs, rwFiles := splitDirs(append([]string{"/sandbox", "/tmp", "/dev/shm", "/dev/pts"}, cfg.RW...))
	rwFiles = append(rwFiles, existing([]string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"})...)
	rules := []landlock.Rule{
		landlock.RODirs(roDirs...),
		landlock.ROFiles(roFiles...),
		landlock.RWDirs(rwDirs...).WithRefer().WithIoctlDev(),
		landlock.RWFiles(rwFiles...).WithIoctlDev(),
		landlock.PathAccess(llsys.AccessFSReadDir, "/"),
	}
	if err := landlock.V5.BestEffort().RestrictPaths(rules...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

// LandlockABI reports the kernel's Landlock ABI version (0 = unavailable).
func LandlockABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// envLimits carries "AS,NPROC" to the limit role.
const envLimits = "FULLSEND_SANDBOX_LIMITS"

// runLimit is the "limit" role: set the rlimits named in envLimits, then
// become the command (argv[1] is its resolved path, argv[2:] its argv).
func runLimit() error {
	var as, nproc uint64
	if _, err := fmt.Sscanf(os.Getenv(envLimits), "%d,%d", &as, &nproc); err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	if len(os.Args) < 3 {
		return fmt.Errorf("limit: no command")
	}
	if as > 0 {
		if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: as, Max: as}); err != nil {
			return fmt.Errorf("RLIMIT_AS: %w", err)
		}
	}
	if nproc > 0 {
		if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: nproc, Max: nproc}); err != nil {
			return fmt.Errorf("RLIMIT_NPROC: %w", err)
		}
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envLimits+"=") {
			env = append(env, kv)
		}
	}
	return unix.Exec(os.Args[1], os.Args[2:], env)
}
