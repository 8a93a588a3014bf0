package egress_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
	"github.com/fullsend-ai/fullsend/internal/sandbox/egress"
	"github.com/fullsend-ai/fullsend/internal/syncbuf"
)

// decisions is a Log that is also an egress.Recorder.
type decisions struct {
	syncbuf.Buffer
	mu  sync.Mutex
	got []string
}

func (d *decisions) EgressDecision(host string, port int, allowed bool, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := "deny"
	if allowed {
		v = "allow"
	}
	d.got = append(d.got, v+" "+net.JoinHostPort(host, itoa(port))+" "+reason)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestRecorder: a Log implementing egress.Recorder receives every decision,
// admitted ones too, with host, port and reason; the denial line still
// reaches the log.
func TestRecorder(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer up.Close()
	_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
	log := &decisions{}
	_, addr := startProxy(t, egress.Config{
		Allow: []string{"ok.test:" + port}, AllowedPrivateNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver: fetchtest.Hosts{"ok.test": {netip.MustParseAddr("127.0.0.1")}},
		Log:      log,
	})
	for _, host := range []string{"OK.test", "no.test"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET http://"+host+":"+port+"/ HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
		io.ReadAll(c)
		c.Close()
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	want := []string{"allow ok.test:" + port + " allowed", "deny no.test:" + port + " not in the sandbox allowlist"}
	if len(log.got) != 2 || log.got[0] != want[0] || !strings.HasPrefix(log.got[1], want[1]) {
		t.Errorf("decisions %q, want %q", log.got, want)
	}
	if !strings.Contains(log.String(), "deny no.test:"+port) {
		t.Errorf("denial line missing from the log: %q", log.String())
	}
}
