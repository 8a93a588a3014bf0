package fetch

import (
	"context"
	"fmt"
	"net"
	"strconv"
)

// DialContext opens a TCP connection to addr ("host:port") under rules 3
// and 4 of the package documentation: the host is resolved once through
// Options.Resolver, every answer (or the literal address) must pass the
// address rules (internal addresses only inside AllowedPrivateNetworks,
// cloud metadata never), and only the vetted addresses are dialled. It does
// not consult AllowedDomains: it is for clients whose peers are chosen by
// the org configuration (the OCI cache tier, package ocicache), which
// decide the host themselves and use this dial for every connection of
// their own transport. network must be "tcp", "tcp4" or "tcp6".
func (c *Client) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("dial %s %s: only tcp is supported", network, addr)
	}
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil || port == 0 {
		return nil, fmt.Errorf("dial %s: bad port %q", addr, p)
	}
	addrs, err := c.vet(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return dialVetted(ctx, c.pool.dial, host, uint16(port), addrs, c.vetAddr)
}
