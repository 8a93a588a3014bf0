package fetch

import (
	"context"
	"net"
	"net/http"
)

// SetDialForTest replaces the TCP dial of c. It must be called before c's
// first request. The dial still only ever receives vetted "ip:port"
// addresses; tests use it to observe them and to route a vetted public
// address to a loopback server without sending traffic anywhere else.
func SetDialForTest(c *Client, d func(ctx context.Context, network, addr string) (net.Conn, error)) {
	c.pool.dial = d
}

// TransportsForTest returns the transports c has built so far.
func TransportsForTest(c *Client) []*http.Transport {
	c.pool.mu.Lock()
	defer c.pool.mu.Unlock()
	var out []*http.Transport
	for _, tr := range c.pool.m {
		out = append(out, tr)
	}
	return out
}
