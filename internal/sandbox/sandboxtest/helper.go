//go:build linux

package sandboxtest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fullsend-ai/fullsend/internal/reexec"
)

// helperEnv switches a re-executed test binary into helper mode: inside a
// sandbox the test binary is visible as /usr/local/bin/fullsend, so the suite
// uses it for probes no shell can do portably (TCP dial, HTTP through the
// proxy).
const helperEnv = "FULLSEND_SANDBOXTEST_HELPER"

// Reexec is the first call of the TestMain of a backend's tests: the
// backend runs the test binary in its sandbox roles (reexec.Main), and the
// suite's probes run it, as a command in the sandbox, in helper mode. In
// either case it plays that part and exits; otherwise it returns.
func Reexec() {
	reexec.Main()
	if os.Getenv(helperEnv) == "" || len(os.Args) < 3 {
		return
	}
	os.Exit(helper(os.Args[1], os.Args[2]))
}

func helper(op, arg string) int {
	switch op {
	case "dial":
		c, err := net.DialTimeout("tcp", arg, 2*time.Second)
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		c.Close()
		fmt.Println("connected")
		return 0
	case "userns":
		// Go starts children with clone3 (pidfd), which seccomp cannot
		// filter by flags: this probes the kernel-side limit.
		cmd := exec.Command(arg)
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
		if err := cmd.Run(); err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println("created")
		return 0
	case "socket", "socketpair":
		// arg: an address family number; prints "ok" or "errno N".
		fam, err := strconv.Atoi(arg)
		if err != nil {
			fmt.Println("bad family", arg)
			return 2
		}
		typ := unix.SOCK_STREAM
		switch fam {
		case unix.AF_PACKET:
			typ = unix.SOCK_RAW
		case unix.AF_ALG:
			typ = unix.SOCK_SEQPACKET
		case unix.AF_NETLINK:
			typ = unix.SOCK_RAW
		}
		if op == "socket" {
			fd, err := unix.Socket(fam, typ, 0)
			if err == nil {
				unix.Close(fd)
			}
			printErrno(err)
		} else {
			fds, err := unix.Socketpair(fam, typ, 0)
			if err == nil {
				unix.Close(fds[0])
				unix.Close(fds[1])
			}
			printErrno(err)
		}
		return 0
	case "detach":
		// Leave the exec's process tree every way a process can: a new
		// session (setsid; where the sandbox refuses it, without), an
		// orphan (this process exits at once), no stdio. The child sleeps
		// arg seconds (the test's marker). Prints what setsid answered.
		cmd := exec.Command("sleep", arg)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		err := cmd.Start()
		if err != nil {
			cmd = exec.Command("sleep", arg)
			if err2 := cmd.Start(); err2 != nil {
				fmt.Println("error:", err2)
				return 1
			}
		}
		fmt.Print("setsid: ")
		printErrno(err)
		cmd.Process.Release()
		return 0
	case "get":
		tr := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
		c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		resp, err := c.Get(arg)
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		fmt.Printf("%d %s\n", resp.StatusCode, strings.TrimSpace(string(b)))
		return 0
	}
	fmt.Println("unknown helper op", op)
	return 2
}

func printErrno(err error) {
	var e syscall.Errno
	switch {
	case err == nil:
		fmt.Println("ok")
	case errors.As(err, &e):
		fmt.Println("errno", int(e))
	default:
		fmt.Println("error:", err)
	}
}

// Resolver maps every "*.test" name to 127.0.0.1 and fails for the rest, so
// allowlist tests never leave loopback.
type Resolver struct{}

// LookupNetIP implements sandbox.Resolver.
func (Resolver) LookupNetIP(_ context.Context, _ string, host string) ([]netip.Addr, error) {
	if strings.HasSuffix(strings.TrimSuffix(host, "."), ".test") {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, fmt.Errorf("sandboxtest resolver: no such host %q", host)
}
