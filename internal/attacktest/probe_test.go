//go:build linux

package attacktest

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// probe runs inside the sandbox as an agent command (this test binary is
// /usr/local/bin/fullsend there). It makes the system calls a hostile agent
// would and prints one line per attempt, "NAME ok" or "NAME errno",
// for the test to read from the agent's output.
func probe(name string, args []string) int {
	switch name {
	case "socket":
		// args: family numbers (AF_VSOCK 40, AF_ALG 38, AF_PACKET 17, AF_INET 2, AF_UNIX 1).
		for _, a := range args {
			fam, err := strconv.Atoi(a)
			if err != nil {
				fmt.Println(a, "bad family")
				continue
			}
			typ := syscall.SOCK_STREAM
			switch fam {
			case 17:
				typ = syscall.SOCK_RAW
			case 38:
				typ = syscall.SOCK_SEQPACKET
			}
			fd, err := syscall.Socket(fam, typ, 0)
			if err != nil {
				fmt.Printf("family %d %s\n", fam, errName(err))
				continue
			}
			syscall.Close(fd)
			fmt.Printf("family %d ok\n", fam)
		}
	case "signal":
		// Send SIGKILL to every process this agent command can see that
		// is neither itself nor one of its ancestors.
		ancestors := map[int]bool{}
		for pid := os.Getpid(); pid > 0; {
			ancestors[pid] = true
			pid = parentOf(pid)
		}
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || ancestors[pid] {
				continue
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				fmt.Printf("kill %d %s\n", pid, errName(err))
			} else {
				fmt.Printf("kill %d ok\n", pid)
			}
		}
		for pid := range ancestors {
			if pid != os.Getpid() && pid > 1 {
				// Ancestors are the agent's own shell, or the supervisor.
				fmt.Printf("ancestor %d\n", pid)
			}
		}
	case "alloc":
		// Allocate and touch args[0] MiB, a page at a time.
		n, _ := strconv.Atoi(args[0])
		var keep [][]byte
		for i := 0; i < n; i++ {
			b := make([]byte, 1<<20)
			for j := 0; j < len(b); j += 4096 {
				b[j] = 1
			}
			keep = append(keep, b)
		}
		fmt.Println("allocated", len(keep), "MiB")
	default:
		fmt.Fprintln(os.Stderr, "unknown probe", name)
		return 2
	}
	return 0
}

func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...
	s := string(b)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ')' {
			var state string
			var ppid int
			if _, err := fmt.Sscanf(s[i+1:], " %s %d", &state, &ppid); err == nil {
				return ppid
			}
			break
		}
	}
	return 0
}

func errName(err error) string {
	if e, ok := err.(syscall.Errno); ok {
		switch e {
		case syscall.EPERM:
			return "EPERM"
		case syscall.EACCES:
			return "EACCES"
		case syscall.EAFNOSUPPORT:
			return "EAFNOSUPPORT"
		case syscall.ESRCH:
			return "ESRCH"
		case syscall.EINVAL:
			return "EINVAL"
		}
		return fmt.Sprintf("errno%d", int(e))
	}
	return err.Error()
}
