package kubernetes

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	xws "golang.org/x/net/websocket"
)

// TestStdinFramesOnWsstreamServer: the API server reads the exec stream
// with golang.org/x/net/websocket's Message.Receive (apimachinery's
// wsstream), which returns each frame of a fragmented message as a message
// of its own and takes its first byte for the channel. This server does
// the same and counts the stdin bytes it gets: every byte of a stream
// larger than one frame must arrive.
func TestStdinFramesOnWsstreamServer(t *testing.T) {
	srv := httptest.NewServer(xws.Server{
		Handshake: func(c *xws.Config, _ *http.Request) error {
			c.Protocol = []string{execProtocol}
			return nil
		},
		Handler: func(ws *xws.Conn) {
			ws.PayloadType = xws.BinaryFrame
			n := 0
			for {
				var data []byte
				if err := xws.Message.Receive(ws, &data); err != nil {
					return
				}
				if len(data) == 0 {
					continue
				}
				if data[0] == chanClose {
					break
				}
				if data[0] == chanStdin {
					n += len(data) - 1
				}
			}
			xws.Message.Send(ws, append([]byte{chanStdout}, fmt.Sprint(n)...))
			xws.Message.Send(ws, append([]byte{chanError}, `{"status":"Success"}`...))
			ws.Close()
		},
	})
	defer srv.Close()
	ex := NewExecutor(&Cluster{Server: srv.URL})
	for _, size := range []int{1000, 40000, 300000} {
		var out bytes.Buffer
		if err := ex(context.Background(), "ns", "p", []string{"wc", "-c"}, strings.NewReader(strings.Repeat("x", size)), &out, &out); err != nil {
			t.Fatal(err)
		}
		if out.String() != fmt.Sprint(size) {
			t.Errorf("sent %d bytes of stdin, the server got %s", size, out.String())
		}
	}
}
