// Package fetchtest provides what tests need to reach loopback servers
// through the real fetch.Client: a process-wide test certificate authority,
// TLS servers on 127.0.0.1 whose certificates cover any host names a test
// chooses, and fake DNS resolvers: Resolver maps those names to loopback
// addresses, counts lookups and can change its answers (DNS rebinding);
// Hosts is a fixed map for tests that only need answers (the egress proxy's
// checks, which never dial what they refuse). Sink counts connections to
// prove nothing was dialled; Serve runs a server that takes its listener
// (the egress proxy, the gateway) on 127.0.0.1. Two helpers serve other
// tests: RequestLog, the request log and latency knob the fake servers
// (forgetest, ocicachetest) embed, and CheckDeps, the dependency-diet
// test of the verifying core's packages.
//
// Nothing here opens a connection beyond 127.0.0.1; a name the Resolver
// does not know fails to resolve, like NXDOMAIN. Production code never
// imports this package.
package fetchtest
