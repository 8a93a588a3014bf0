// Package fetchtest provides what tests need to reach loopback servers
// through the real fetch.Client: a process-wide test certificate authority,
// TLS servers on 127.0.0.1 whose certificates cover any host names a test
// chooses, and a fake DNS resolver that maps those names to loopback
// addresses and counts lookups.
//
// Nothing here opens a connection beyond 127.0.0.1; a name the Resolver
// does not know fails to resolve, like NXDOMAIN. Production code never
// imports this package.
package fetchtest
