package kubernetes

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// The exec stream speaks v5.channel.k8s.io over WebSocket (Kubernetes
// 1.30 and later; client-go's own default since then): every binary
// message starts with its channel byte. The client sends stdin (0) and,
// at its end, CLOSE (255) naming the stdin channel; the server sends
// stdout (1), stderr (2), and one metav1.Status on the error channel (3)
// before it closes the connection. v4 has no CLOSE, so a command reading
// stdin (tar -x) would never see its end: v5 is required.
const (
	execProtocol = "v5.channel.k8s.io"
	chanStdin    = 0
	chanStdout   = 1
	chanStderr   = 2
	chanError    = 3
	chanClose    = 255
)

// Every stdin message must go out as one WebSocket frame: the API server
// (apimachinery's wsstream, on golang.org/x/net/websocket) reads each
// frame of a fragmented message as a message of its own and takes its
// first byte for the channel, so a fragmented write lost one byte per
// extra frame. gorilla fragments a message larger than its write buffer:
// a chunk, its channel byte and the largest frame header (14 bytes) fit.
const (
	stdinChunk  = 16 << 10
	writeBuffer = 32 << 10
)

// NewExecutor returns the Executor of cluster c.
func NewExecutor(c *Cluster) Executor {
	d := &websocket.Dialer{
		Proxy:            c.Proxy,
		TLSClientConfig:  upgradeTLS(c.TLS),
		HandshakeTimeout: 30 * time.Second,
		Subprotocols:     []string{execProtocol},
		ReadBufferSize:   32 << 10,
		WriteBufferSize:  writeBuffer,
	}
	return func(ctx context.Context, ns, pod string, cmd []string, stdin io.Reader, stdout, stderr io.Writer) error {
		u, err := ExecURL(c.Server, ns, pod, cmd, stdin != nil)
		if err != nil {
			return err
		}
		h := http.Header{"User-Agent": {"fullsend"}}
		if auth := c.auth(u); auth != nil {
			if err := auth(&http.Request{Header: h}); err != nil {
				return err
			}
		}
		u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
		conn, resp, err := d.DialContext(ctx, u.String(), h)
		if err != nil {
			return dialError(err, resp)
		}
		defer conn.Close()
		if conn.Subprotocol() != execProtocol {
			return fmt.Errorf("pods/exec: the API server does not speak %s (Kubernetes 1.30 or later is needed)", execProtocol)
		}
		return stream(ctx, conn, stdin, stdout, stderr)
	}
}

// upgradeTLS is the exec dialer's own copy of the cluster's TLS settings,
// offering HTTP/1.1 only in ALPN. A WebSocket upgrade is an HTTP/1.1
// request: offered "h2" (which the REST transport adds to the config it is
// given), a real API server picks it and the handshake fails ("websocket:
// protocol "h2" was given but is not supported").
func upgradeTLS(base *tls.Config) *tls.Config {
	var c *tls.Config
	if base != nil {
		c = base.Clone()
	} else {
		c = &tls.Config{}
	}
	c.NextProtos = []string{"http/1.1"}
	return c
}

// dialError names what refused the upgrade: the API server's Status when
// it sent one.
func dialError(err error, resp *http.Response) error {
	if resp == nil {
		return fmt.Errorf("pods/exec: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return fmt.Errorf("pods/exec: %w", statusError(resp.StatusCode, body))
}

// stream runs one exec session on conn until the server closes it, a
// writer fails or ctx ends.
func stream(ctx context.Context, conn *websocket.Conn, stdin io.Reader, stdout, stderr io.Writer) error {
	// Ending the context closes the connection, which ends the read loop.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var wmu sync.Mutex
	send := func(ch byte, p []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		return conn.WriteMessage(websocket.BinaryMessage, append([]byte{ch}, p...))
	}
	if stdin != nil {
		go func() {
			buf := make([]byte, stdinChunk)
			for {
				n, err := stdin.Read(buf)
				if n > 0 && send(chanStdin, buf[:n]) != nil {
					return
				}
				if err != nil {
					send(chanClose, []byte{chanStdin})
					return
				}
			}
		}()
	}
	var status []byte
	for {
		typ, msg, err := conn.ReadMessage()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if status != nil || websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				return execStatus(status)
			}
			return fmt.Errorf("pods/exec stream: %w", err)
		}
		if typ != websocket.BinaryMessage || len(msg) == 0 {
			continue
		}
		var w io.Writer
		switch msg[0] {
		case chanStdout:
			w = stdout
		case chanStderr:
			w = stderr
		case chanError:
			status = append(status, msg[1:]...)
			continue
		default:
			continue
		}
		if _, err := w.Write(msg[1:]); err != nil {
			return err
		}
	}
}

// execStatus turns the error channel's metav1.Status into nil (Success),
// an *ExitError (NonZeroExitCode) or an error with the server's message.
func execStatus(b []byte) error {
	if len(b) == 0 {
		return errors.New("pods/exec: the stream ended without the command's status")
	}
	var st struct {
		Status  string `json:"status"`
		Reason  string `json:"reason"`
		Message string `json:"message"`
		Details *struct {
			Causes []struct {
				Type    string `json:"reason"`
				Message string `json:"message"`
			} `json:"causes"`
		} `json:"details"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("pods/exec: unreadable status %q: %v", b, err)
	}
	if st.Status == "Success" {
		return nil
	}
	if st.Reason == "NonZeroExitCode" && st.Details != nil {
		for _, c := range st.Details.Causes {
			if c.Type == "ExitCode" {
				code, err := strconv.Atoi(c.Message)
				if err != nil {
					return fmt.Errorf("pods/exec: exit code %q: %v", c.Message, err)
				}
				return &ExitError{Code: code}
			}
		}
	}
	return fmt.Errorf("pods/exec: %s", st.Message)
}
