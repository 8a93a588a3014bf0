// Package sandboxtest is the conformance suite every sandbox backend must
// pass. Run it from the backend's tests:
//
//	func TestMain(m *testing.M) {
//		sandboxtest.Reexec() // the sandbox roles and the suite's probes
//		os.Exit(m.Run())
//	}
//
//	func TestConformance(t *testing.T) {
//		sandboxtest.Run(t, func(t *testing.T, o sandbox.Options) sandbox.Backend {
//			b, err := local.New(o)
//			if err != nil { t.Skip(err) }
//			return b
//		})
//	}
//
// The factory receives the Options the test needs (a resolver that maps
// "*.test" to 127.0.0.1, loopback exempted from the internal-address rule or
// not, a private TempDir). Commands run inside the sandbox are POSIX sh and
// the usual tools (sleep, cat, awk, dd, head, wc, du, cut, ls, grep, tr);
// network and socket probes re-execute the test binary, visible inside as
// /usr/local/bin/fullsend, in helper mode. Nothing leaves loopback.
//
// Besides exec semantics, mounts, network policy and cleanup, it checks the
// resource rules of package sandbox: pids (a fork bomb fails inside, the
// limit holds, the session survives), memory (an OOM kill is reported when
// the backend says it enforces the limit with cgroups; otherwise it says so
// in the log), /tmp and /sandbox sizes (ENOSPC or EFBIG inside, nothing on
// the host), read-write mount growth (ErrWorkspaceLimit), output and
// download size (ErrOutputLimit, nothing left behind), download file
// count (ErrOutputFilesLimit, nothing left behind), socket families
// (EAFNOSUPPORT beyond AF_UNIX, AF_INET, AF_INET6, AF_NETLINK), and that an
// agent command cannot signal the sandbox's own processes.
package sandboxtest
