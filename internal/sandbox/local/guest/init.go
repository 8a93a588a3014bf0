//go:build linux

package guest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

const envSuper = "FULLSEND_SANDBOX_SUPER"

// Fixed descriptor numbers in re-executed children (ExtraFiles start at 3).
const (
	fdCtl   = 3 // control socket to the host (init) or supervisor channel
	fdSuper = 4 // init only: the supervisor's end, handed down
)

// ProxyPort is the loopback port of the in-sandbox proxy endpoint.
const ProxyPort = 3128

// Run plays role, the value of EnvRole (which the caller, package reexec,
// has already removed from the environment), and returns the exit status.
// The roles that become the command (enter, confine) return only when they
// fail, hold returns 0 when its stdin closes, and every other way out,
// including an unknown role, is a failure: one line on stderr, status 120.
func Run(role string) int {
	var err error
	switch role {
	case "init":
		err = runInit()
	case "supervisor":
		err = runSupervisor()
	case "pid1":
		err = runPid1()
	case "enter":
		runEnter()
	case "archive":
		err = runArchive()
	case "confine":
		runConfine()
	case "hold":
		// Keep a user namespace alive until stdin closes (idmapped mounts).
		var b [1]byte
		os.Stdin.Read(b[:])
		return 0
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	fmt.Fprintf(os.Stderr, "fullsend sandbox %s: %v\n", role, err)
	return 120
}

// runInit is pid 1 of the sandbox: it starts the supervisor (whose start-up
// then overlaps the rest), builds the root file system, brings up loopback
// and then only reaps children. Its death (Terminate kills it) makes the
// kernel kill every process of the sandbox.
func runInit() error {
	ctl := &conn{fd: fdCtl}
	superEnd := os.NewFile(fdSuper, "super")
	// Nobody in the sandbox (same host uid) may read or write our memory.
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	m, files, err := ctl.recv()
	if err != nil {
		return err
	}
	fail := func(err error) error {
		ctl.send(Message{Op: "error", Err: err.Error()})
		return err
	}
	if m.Op != "config" || m.Config == nil {
		return fail(fmt.Errorf("expected config, got %q", m.Op))
	}
	cfg := m.Config
	fd := func(i int) (*os.File, error) {
		if i < 0 || i >= len(files) {
			return nil, fmt.Errorf("descriptor %d missing", i)
		}
		return files[i], nil
	}
	if cfg.Home < 0 || cfg.Home > len(files) {
		return fail(fmt.Errorf("bad home cgroups %d", cfg.Home))
	}
	home := files[len(files)-cfg.Home:]
	// Nothing mounted here propagates to the host; and starting a process
	// in a new user namespace writes its id maps by pid, under this pid
	// namespace's /proc.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fail(fmt.Errorf("make mounts private: %w", err))
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fail(fmt.Errorf("mount /proc: %w", err))
	}
	superPid, err := startSupervisor(cfg, superEnd)
	if err != nil {
		return fail(fmt.Errorf("start supervisor: %w", err))
	}
	superEnd.Close()
	// Move the supervisor into the sandbox's own groups, where the host
	// moves this process: a move waits for an RCU grace period, which this
	// one most likely shares with the host's, and which passes while the
	// root is built.
	placed := make(chan error, 1)
	go func() { placed <- placeInto(home, superPid) }()
	if err := buildRoot(cfg, fd); err != nil {
		return fail(err)
	}
	if err := <-placed; err != nil {
		return fail(fmt.Errorf("move the supervisor to the sandbox's cgroups: %w", err))
	}
	CloseAll(files)
	if err := unix.Sethostname([]byte("sandbox")); err != nil {
		return fail(fmt.Errorf("sethostname: %w", err))
	}
	if err := loopbackUp(); err != nil {
		return fail(err)
	}
	var lnFile *os.File
	if cfg.Proxy {
		if lnFile, err = proxyEndpoint(); err != nil {
			return fail(err)
		}
	}
	// No process below this point may create a user namespace (clone3 cannot
	// be filtered by seccomp; this per-namespace limit covers it).
	if err := os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0"), 0); err != nil {
		return fail(fmt.Errorf("limit user namespaces: %w", err))
	}
	var extra []*os.File
	if lnFile != nil {
		extra = append(extra, lnFile)
	}
	if err := ctl.send(Message{Op: "ready"}, extra...); err != nil {
		return err
	}
	if lnFile != nil {
		lnFile.Close()
	}
	return reap(ctl, superPid)
}

// proxyEndpoint listens on the in-sandbox proxy port.
func proxyEndpoint() (*os.File, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
		err = unix.Bind(fd, &unix.SockaddrInet4{Port: ProxyPort, Addr: [4]byte{127, 0, 0, 1}})
		if err == nil {
			err = unix.Listen(fd, 128)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("proxy endpoint: %w", err)
	}
	return os.NewFile(uintptr(fd), "proxy-endpoint"), nil
}

// reap reaps orphans until the supervisor exits or the host closes its end
// of ctl (it is gone): either takes the sandbox down.
func reap(ctl *conn, superPid int) error {
	go func() {
		for {
			if _, fs, err := ctl.recv(); err != nil {
				os.Exit(0)
			} else {
				CloseAll(fs)
			}
		}
	}()
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("wait: %w", err)
		}
		if pid == superPid {
			os.Exit(0)
		}
	}
}

// startSupervisor starts the supervisor in its own user namespace, with
// superEnd (its channel to the host). It starts before the root is built: its binary is this one
// (/proc/self/exe), its root and working directory follow the pivot to the
// new root, and it does nothing but load its filter until the host, told
// by this process that the root is ready, sends it requests.
//
// syscall.ForkExec, not os.StartProcess: this process reaps by pid and
// needs no pidfd (nor the probe forks that come with the first one).
func startSupervisor(cfg *InitConfig, superEnd *os.File) (int, error) {
	sc, _ := json.Marshal(cfg.Super)
	fds := []uintptr{^uintptr(0), 2, 2, superEnd.Fd()} // no stdin
	return syscall.ForkExec("/proc/self/exe", []string{"fullsend-sandbox-supervisor"}, &syscall.ProcAttr{
		Dir: "/",
		Env: append([]string{EnvRole + "=supervisor", envSuper + "=" + string(sc),
			"PATH=/usr/local/bin:/usr/bin:/bin"}, RaceEnv()...),
		Files: fds,
		Sys: &syscall.SysProcAttr{
			Cloneflags:                 syscall.CLONE_NEWUSER,
			UidMappings:                []syscall.SysProcIDMap{{ContainerID: cfg.Super.AgentUID, HostID: 0, Size: 1}},
			GidMappings:                []syscall.SysProcIDMap{{ContainerID: cfg.Super.AgentGID, HostID: 0, Size: 1}},
			GidMappingsEnableSetgroups: false,
			// CAP_SYS_ADMIN in the supervisor's own user namespace (which
			// owns no mount, network or other namespace): what it needs to
			// give each exec its own pid and mount namespaces.
			AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN},
			Pdeathsig:   syscall.SIGKILL,
		},
	})
}

// placeInto moves process pid (of this pid namespace) into each group of
// which fds holds the cgroup.procs file.
func placeInto(fds []*os.File, pid int) error {
	for _, f := range fds {
		if _, err := f.WriteString(strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	return nil
}

// System directories bound read-only from the host (symlinks are recreated).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// Host /etc entries made visible read-only. Identity files (passwd, group,
// hosts, resolv.conf, nsswitch.conf, hostname) are generated instead, and
// nothing else of the host's /etc (shadow, ssh keys, credentials) is visible.
var etcEntries = []string{
	"alternatives", "ssl", "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies",
	"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "protocols", "services",
	"os-release", "lsb-release", "debian_version", "mime.types", "profile", "bash.bashrc", "inputrc",
	"terminfo", "magic", "magic.mime", "gai.conf", "host.conf", "environment", "login.defs",
}

// buildRoot builds the sandbox's root and pivots into it (mounts must be
// private already).
func buildRoot(cfg *InitConfig, fd func(int) (*os.File, error)) error {
	// Open path sources first: the new root may be stacked over their parent.
	opened, err := openPathSources(cfg)
	defer func() {
		for _, f := range opened {
			f.Close()
		}
	}()
	if err != nil {
		return err
	}
	nr, err := newRootDir()
	if err != nil {
		return err
	}
	r := &rootBuilder{cfg: cfg, nr: nr, fd: fd, opened: opened}
	for _, step := range []func() error{r.systemDirs, r.usrLocalBin, r.etc, r.scratch, r.devProc, r.specMounts} {
		if err := step(); err != nil {
			return err
		}
	}
	return enterRoot(nr)
}

// openPathSources opens (O_PATH) the sources of the binary's and the spec's
// mounts that come as paths, not descriptors; the map holds what was opened,
// also on error.
func openPathSources(cfg *InitConfig) (map[string]*os.File, error) {
	opened := map[string]*os.File{}
	for _, m := range append([]MountConfig{cfg.Exe}, cfg.Mounts...) {
		if m.FD < 0 {
			fd, err := unix.Open(m.Source, unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				return opened, fmt.Errorf("mount source %s: %w", m.Source, err)
			}
			opened[m.Source] = os.NewFile(uintptr(fd), m.Source)
		}
	}
	return opened, nil
}

// newRootDir mounts the new root: a tmpfs stacked, in our private mount
// namespace only, on a directory every uid can traverse.
func newRootDir() (string, error) {
	nr := ""
	for _, d := range []string{"/tmp", "/mnt", "/run", "/var/tmp", "/media", "/srv", "/opt"} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			nr = d
			break
		}
	}
	if nr == "" {
		return "", fmt.Errorf("no directory to build the sandbox root on")
	}
	if err := unix.Mount("tmpfs", nr, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=16m"); err != nil {
		return "", fmt.Errorf("root tmpfs: %w", err)
	}
	return nr, nil
}

// rootBuilder fills the new root at nr, one step per part of the tree.
type rootBuilder struct {
	cfg    *InitConfig
	nr     string
	fd     func(int) (*os.File, error)
	opened map[string]*os.File
}

// at is sandbox path p under the new root.
func (r *rootBuilder) at(p string) string { return filepath.Join(r.nr, p) }

// attach mounts m at its target under the new root.
func (r *rootBuilder) attach(m MountConfig) error { return attach(m, r.at(m.Target), r.fd, r.opened) }

// systemDirs replicates the host's systemDirs.
func (r *rootBuilder) systemDirs() error {
	for _, d := range systemDirs {
		if err := replicate(d, r.at(d)); err != nil {
			return err
		}
	}
	return nil
}

// usrLocalBin: a tmpfs replica of the host's /usr/local/bin so the fullsend
// binary (and spec mounts targeting /usr/local/bin/NAME, such as an agent
// CLI) can be added without touching the host. It is read-only afterwards,
// so those mounts are attached here, before the remount.
func (r *rootBuilder) usrLocalBin() error {
	inBin := map[string]bool{}
	for _, m := range r.cfg.Mounts {
		if filepath.Dir(m.Target) == "/usr/local/bin" {
			inBin[filepath.Base(m.Target)] = true
		}
	}
	bin := r.at("/usr/local/bin")
	if st, err := os.Stat(bin); err == nil && st.IsDir() {
		if err := unix.Mount("tmpfs", bin, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
			return fmt.Errorf("/usr/local/bin tmpfs: %w", err)
		}
		if ents, err := os.ReadDir("/usr/local/bin"); err == nil {
			for _, e := range ents {
				if e.Name() == "fullsend" || inBin[e.Name()] {
					continue
				}
				if err := replicate(filepath.Join("/usr/local/bin", e.Name()), r.at("/usr/local/bin/"+e.Name())); err != nil {
					return err
				}
			}
		}
	} else if err := os.MkdirAll(bin, 0o755); err != nil {
		return fmt.Errorf("/usr/local/bin: %w", err)
	}
	if err := r.attach(r.cfg.Exe); err != nil {
		return fmt.Errorf("bind fullsend binary: %w", err)
	}
	for _, m := range r.cfg.Mounts {
		if inBin[filepath.Base(m.Target)] && filepath.Dir(m.Target) == "/usr/local/bin" {
			if err := r.attach(m); err != nil {
				return fmt.Errorf("mount %s: %w", m.Target, err)
			}
		}
	}
	return remountRO(bin, false)
}

// etc: the host's etcEntries, read-only, and generated identity files.
func (r *rootBuilder) etc() error {
	if err := os.MkdirAll(r.at("/etc"), 0o755); err != nil {
		return err
	}
	for _, e := range etcEntries {
		if err := replicate("/etc/"+e, r.at("/etc/"+e)); err != nil {
			return err
		}
	}
	gen := map[string]string{
		"passwd":        "root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000:sandbox:/sandbox:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"group":         "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n",
		"hosts":         "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n",
		"hostname":      "sandbox\n",
		"resolv.conf":   "# no resolver: egress goes through the HTTP proxy in $HTTPS_PROXY\nnameserver 127.0.0.1\noptions timeout:1 attempts:1\n",
		"nsswitch.conf": "passwd: files\ngroup: files\nhosts: files dns\n",
	}
	for name, content := range gen {
		if err := os.WriteFile(r.at("/etc/"+name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// scratch: /sandbox and /tmp are size-limited tmpfs, so writing past the
// limit is ENOSPC inside and nothing reaches the host's disks; /var/tmp is
// /tmp.
func (r *rootBuilder) scratch() error {
	if r.cfg.SandboxBytes <= 0 || r.cfg.TmpBytes <= 0 {
		return fmt.Errorf("sandbox and tmp sizes must be positive")
	}
	if err := os.MkdirAll(r.at("/sandbox"), 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", r.at("/sandbox"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("mode=0755,size=%d", r.cfg.SandboxBytes)); err != nil {
		return fmt.Errorf("/sandbox: %w", err)
	}
	if err := os.MkdirAll(r.at("/tmp"), 0o1777); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", r.at("/tmp"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("mode=1777,size=%d", r.cfg.TmpBytes)); err != nil {
		return fmt.Errorf("/tmp: %w", err)
	}
	os.MkdirAll(r.at("/var"), 0o755)
	os.Symlink("../tmp", r.at("/var/tmp"))
	os.MkdirAll(r.at("/run"), 0o755)
	return nil
}

// devProc: a minimal read-only /dev and this pid namespace's /proc.
func (r *rootBuilder) devProc() error {
	if err := buildDev(r.at("/dev")); err != nil {
		return err
	}
	if err := remountRO(r.at("/dev"), false); err != nil {
		return err
	}
	if err := os.MkdirAll(r.at("/proc"), 0o555); err != nil {
		return err
	}
	if err := unix.Mount("proc", r.at("/proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}

// specMounts attaches the spec's mounts, parents first (those in
// /usr/local/bin are attached by usrLocalBin).
func (r *rootBuilder) specMounts() error {
	for _, m := range r.cfg.Mounts {
		if filepath.Dir(m.Target) == "/usr/local/bin" {
			continue
		}
		if err := r.attach(m); err != nil {
			return fmt.Errorf("mount %s: %w", m.Target, err)
		}
	}
	return nil
}

// enterRoot enters the new root at nr; the old one is detached and
// disappears, and the new one becomes read-only.
func enterRoot(nr string) error {
	if err := unix.Chdir(nr); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach old root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return err
	}
	return remountRO("/", false)
}

func mkMountpoint(p string, dir bool) error {
	if dir {
		return os.MkdirAll(p, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// replicate makes host path src visible at dst: symlinks are recreated,
// directories and files are bound read-only; missing sources are skipped.
func replicate(src, dst string) error {
	st, err := os.Lstat(src)
	if err != nil {
		return nil
	}
	if st.Mode()&os.ModeSymlink != 0 {
		l, err := os.Readlink(src)
		if err != nil {
			return err
		}
		os.MkdirAll(filepath.Dir(dst), 0o755)
		return os.Symlink(l, dst)
	}
	if err := mkMountpoint(dst, st.IsDir()); err != nil {
		return fmt.Errorf("%s: %w", dst, err)
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	return remountRO(dst, true)
}

// attach makes m visible at dst: a detached mount passed by the host is
// moved there, otherwise the source path is bound.
func attach(m MountConfig, dst string, fd func(int) (*os.File, error), opened map[string]*os.File) error {
	if err := mkMountpoint(dst, m.IsDir); err != nil {
		return err
	}
	if m.FD >= 0 {
		f, err := fd(m.FD)
		if err != nil {
			return err
		}
		if err := unix.MoveMount(int(f.Fd()), "", unix.AT_FDCWD, dst, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("move_mount: %w", err)
		}
	} else if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(int(opened[m.Source].Fd())), dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	if m.ReadOnly {
		return remountRO(dst, true)
	}
	return unix.MountSetattr(unix.AT_FDCWD, dst, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV})
}

func remountRO(p string, recursive bool) error {
	var flags uint
	if recursive {
		flags = unix.AT_RECURSIVE
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(unix.AT_FDCWD, p, flags, attr); err != nil {
		return fmt.Errorf("read-only %s: %w", p, err)
	}
	return nil
}

func buildDev(dev string) error {
	if err := os.MkdirAll(dev, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("/dev tmpfs: %w", err)
	}
	for _, n := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		p := filepath.Join(dev, n)
		if err := mkMountpoint(p, false); err != nil {
			return err
		}
		if err := unix.Mount("/dev/"+n, p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind /dev/%s: %w", n, err)
		}
	}
	os.MkdirAll(filepath.Join(dev, "pts"), 0o755)
	if err := unix.Mount("devpts", filepath.Join(dev, "pts"), "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err == nil {
		os.Symlink("pts/ptmx", filepath.Join(dev, "ptmx"))
	}
	os.MkdirAll(filepath.Join(dev, "shm"), 0o1777)
	if err := unix.Mount("tmpfs", filepath.Join(dev, "shm"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,size=64m"); err != nil {
		return fmt.Errorf("/dev/shm: %w", err)
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		os.Symlink(target, filepath.Join(dev, name))
	}
	return nil
}
