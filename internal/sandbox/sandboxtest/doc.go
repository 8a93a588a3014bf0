// Package sandboxtest is the conformance suite every sandbox backend must
// pass. Run it from the backend's tests:
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
// not, a private TempDir). Commands run inside the sandbox are POSIX sh, sleep,
// cat, awk; network probes re-execute the test binary, visible inside as
// /usr/local/bin/fullsend, in helper mode. Nothing leaves loopback.
package sandboxtest
