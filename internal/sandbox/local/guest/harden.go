//go:build linux

package guest

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// hardenAgent locks the calling process down the way every agent command
// is: no core dumps, Landlock (which sets no_new_privs on every thread) and
// the ProfileAgent seccomp filter synchronised to every thread. It is
// applied by each exec's pid 1 (and inherited by the command) and by the
// archive helper; the supervisor itself carries only ProfileSupervisor.
func hardenAgent(cfg SuperConfig) error {
	unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	if cfg.NoHarden {
		return nil
	}
	if err := landlockRestrict(cfg); err != nil {
		return err
	}
	return loadSeccomp(ProfileAgent)
}

// dropCaps clears every capability set (ambient, inheritable, permitted,
// effective) on every thread of the process — capabilities are per thread,
// and a thread that kept its ambient set would hand it to any child it
// forks — then checks the result in /proc/self/task.
func dropCaps() error {
	if _, _, e := psx.Syscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("clear ambient capabilities: %w", e)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("drop capabilities: %w", e)
	}
	runtime.KeepAlive(&hdr)
	runtime.KeepAlive(&data)
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	for _, t := range tasks {
		st, err := os.ReadFile("/proc/self/task/" + t.Name() + "/status")
		if err != nil {
			continue // the thread exited
		}
		for _, l := range strings.Split(string(st), "\n") {
			k, v, ok := strings.Cut(l, ":")
			if ok && strings.HasPrefix(k, "Cap") && k != "CapBnd" && strings.Trim(strings.TrimSpace(v), "0") != "" {
				return fmt.Errorf("drop capabilities: thread %s still has %s %s", t.Name(), k, strings.TrimSpace(v))
			}
		}
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
