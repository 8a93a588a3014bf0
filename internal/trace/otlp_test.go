package trace

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// received is one request as a collector saw it.
type received struct {
	path, encoding string
	header         http.Header
	rs             []*tracepb.ResourceSpans
	at             time.Time
}

// collector is an OTLP/HTTP receiver on loopback. respond (nil: 200 with
// an empty body) answers the n-th request (from 0).
type collector struct {
	*httptest.Server
	t       *testing.T
	respond func(n int, w http.ResponseWriter)
	mu      sync.Mutex
	got     []received
}

func newCollector(t *testing.T, respond func(n int, w http.ResponseWriter)) *collector {
	c := &collector{t: t, respond: respond}
	c.Server = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err == nil && r.Header.Get("Content-Encoding") == "gzip" {
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(bytes.NewReader(body)); err == nil {
			body, err = io.ReadAll(zr)
		}
	}
	var rs []*tracepb.ResourceSpans
	if err == nil {
		rs, err = decodeEnvelope(body)
	}
	if err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf" {
		c.t.Errorf("collector: %s %s, Content-Type %q: %v", r.Method, r.URL.Path, r.Header.Get("Content-Type"), err)
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	n := len(c.got)
	c.got = append(c.got, received{path: r.URL.Path, encoding: r.Header.Get("Content-Encoding"), header: r.Header.Clone(), rs: rs, at: time.Now()})
	c.mu.Unlock()
	if c.respond != nil {
		c.respond(n, w)
	}
}

func (c *collector) requests() []received {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]received(nil), c.got...)
}

// decodeEnvelope reads an ExportTraceServiceRequest by hand: every field
// must be field 1, length-delimited, one ResourceSpans each.
func decodeEnvelope(b []byte) ([]*tracepb.ResourceSpans, error) {
	var out []*tracepb.ResourceSpans
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num != 1 || typ != protowire.BytesType {
			return nil, errors.New("not field 1 of ExportTraceServiceRequest")
		}
		v, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		rs := &tracepb.ResourceSpans{}
		if err := proto.Unmarshal(v, rs); err != nil {
			return nil, err
		}
		out = append(out, rs)
		b = b[n+m:]
	}
	return out, nil
}

// testExporter is an exporter configured by env, retrying after 1 ms.
func testExporter(t *testing.T, env map[string]string) *otlpExporter {
	t.Helper()
	e, err := newOTLPExporter(envOf(env), "v-test")
	if err != nil {
		t.Fatalf("newOTLPExporter: %v", err)
	}
	e.backoff, e.maxBackoff = time.Millisecond, 4*time.Millisecond
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	return e
}

var (
	traceA = oteltrace.TraceID{0xa1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	traceB = oteltrace.TraceID{0xb1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
)

func spanCtx(tid oteltrace.TraceID, sid byte, remote bool, ts string) oteltrace.SpanContext {
	st, err := oteltrace.ParseTraceState(ts)
	if err != nil {
		panic(err)
	}
	return oteltrace.NewSpanContext(oteltrace.SpanContextConfig{
		TraceID: tid, SpanID: oteltrace.SpanID{0, 0, 0, 0, 0, 0, 0, sid},
		TraceFlags: oteltrace.FlagsSampled, TraceState: st, Remote: remote,
	})
}

func stub(name string, sid byte) tracetest.SpanStub {
	start := time.Unix(1700000000, 123)
	return tracetest.SpanStub{
		Name: name, SpanContext: spanCtx(traceA, sid, false, ""),
		StartTime: start, EndTime: start.Add(time.Second),
		Resource:             resource.NewSchemaless(attribute.String("service.name", "svc")),
		InstrumentationScope: instrumentation.Scope{Name: ScopeName},
	}
}

func ro(stubs ...tracetest.SpanStub) []sdktrace.ReadOnlySpan {
	return tracetest.SpanStubs(stubs).Snapshots()
}

func TestReadExporterConfigEndpoint(t *testing.T) {
	for _, c := range []struct {
		env     map[string]string
		url     string
		errPart string
	}{
		{env: nil, url: "https://localhost:4318/v1/traces"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, url: "http://127.0.0.1:4318/v1/traces"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": " HTTPS://collector.example:443/otlp/ "}, url: "https://collector.example:443/otlp/v1/traces"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://u:secret@h/?q=1#f"}, url: "https://h/v1/traces"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h:1/custom/path"}, url: "http://h:1/custom/path"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h:1"}, url: "http://h:1/"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:2/t"}, url: "http://b:2/t"},
		// *_INSECURE, when set, picks the scheme (as the SDK's exporter did).
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://h", "OTEL_EXPORTER_OTLP_INSECURE": "TRUE"}, url: "http://h/v1/traces"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_EXPORTER_OTLP_INSECURE": "true", "OTEL_EXPORTER_OTLP_TRACES_INSECURE": "false"}, url: "https://h/v1/traces"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"}, errPart: `OTEL_EXPORTER_OTLP_ENDPOINT "localhost:4318": want an http:// or https:// URL`},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "ftp://u:secret@h/x"}, errPart: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT "ftp://u:xxxxx@h/x"`},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://u:secret@[::1"}, errPart: "OTEL_EXPORTER_OTLP_ENDPOINT: not a URL"},
	} {
		cfg, err := readExporterConfig(envOf(c.env), os.ReadFile)
		if (err == nil) != (c.errPart == "") || (err != nil && !strings.Contains(err.Error(), c.errPart)) || (err == nil && cfg.url != c.url) {
			t.Errorf("%v: url %q, error %v; want %q, error containing %q", c.env, cfg.url, err, c.url, c.errPart)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: the error shows the URL's password: %v", c.env, err)
		}
	}
}

func TestReadExporterConfigSettings(t *testing.T) {
	const ep = "OTEL_EXPORTER_OTLP_ENDPOINT"
	for _, c := range []struct {
		env     map[string]string
		headers map[string]string
		timeout time.Duration
		gzip    bool
		errPart string
	}{
		{env: map[string]string{ep: "http://h"}, timeout: DefaultExportTimeout},
		{env: map[string]string{ep: "http://h", "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20t%2Ck, x-tenant = a b ,,"},
			headers: map[string]string{"Authorization": "Bearer t,k", "x-tenant": "a b"}, timeout: DefaultExportTimeout},
		// The traces-specific list replaces the general one.
		{env: map[string]string{ep: "http://h", "OTEL_EXPORTER_OTLP_HEADERS": "a=1,b=2", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "c=3"},
			headers: map[string]string{"c": "3"}, timeout: DefaultExportTimeout},
		{env: map[string]string{ep: "http://h", "OTEL_EXPORTER_OTLP_HEADERS": "a=1,tokensecret"}, errPart: "OTEL_EXPORTER_OTLP_HEADERS: entry 2 has no '='"},
		{env: map[string]string{ep: "http://h", "OTEL_EXPORTER_OTLP_HEADERS": "bad key=secret"}, errPart: `entry 1: "bad key" is not a valid header name`},
		{env: map[string]string{ep: "http://h", "OTEL_EXPORTER_OTLP_HEADERS": "k=secret%zz"}, errPart: "the value of k is not URL-encoded"},
		{env: map[string]string{ep: "http://h", "OTEL_EXPORTER_OTLP_HEADERS": "k=secret%0D%0AX-Injected:%201"}, errPart: "the value of k has a control character"},
		{env: map[string]string{ep: "http://h", "OTEL_EXPORTER_OTLP_TIMEOUT": "2500"}, timeout: 2500 * time.Millisecond},
		{env: map[string]string{ep: "http://h", "OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "0"}, timeout: 0},
		{env: map[string]string{ep: "http://h", "OTEL_EXPORTER_OTLP_TIMEOUT": "10s"}, errPart: `OTEL_EXPORTER_OTLP_TIMEOUT "10s": want a whole number of milliseconds`},
		{env: map[string]string{ep: "http://h", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "-1"}, errPart: `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT "-1"`},
		{env: map[string]string{ep: "http://h", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}, gzip: true, timeout: DefaultExportTimeout},
		{env: map[string]string{ep: "http://h", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none"}, timeout: DefaultExportTimeout},
		{env: map[string]string{ep: "http://h", "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, errPart: `OTEL_EXPORTER_OTLP_COMPRESSION "zstd": want gzip or none`},
	} {
		cfg, err := readExporterConfig(envOf(c.env), os.ReadFile)
		if (err == nil) != (c.errPart == "") || (err != nil && !strings.Contains(err.Error(), c.errPart)) {
			t.Errorf("%v: error %v, want one containing %q", c.env, err, c.errPart)
			continue
		}
		if err != nil {
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("%v: the error shows a header value: %v", c.env, err)
			}
			continue
		}
		if len(cfg.headers) != len(c.headers) || cfg.timeout != c.timeout || cfg.gzip != c.gzip {
			t.Errorf("%v: headers %v, timeout %v, gzip %v; want %v, %v, %v", c.env, cfg.headers, cfg.timeout, cfg.gzip, c.headers, c.timeout, c.gzip)
		}
		for k, v := range c.headers {
			if cfg.headers[k] != v {
				t.Errorf("%v: header %s = %q, want %q", c.env, k, cfg.headers[k], v)
			}
		}
	}
}

func TestReadExporterConfigCertificates(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t, "client")
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca, cert, key, junk := write("ca.pem", certPEM), write("c.pem", certPEM), write("k.pem", keyPEM), write("junk", []byte("junk"))
	for _, c := range []struct {
		env        map[string]string
		roots, crt bool
		errPart    string
	}{
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://h", "OTEL_EXPORTER_OTLP_CERTIFICATE": ca}, roots: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://h", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE": cert, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": key}, crt: true},
		// The traces-specific pair wins: the general one is not even read.
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://h", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE": cert, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": key,
			"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": cert, "OTEL_EXPORTER_OTLP_CLIENT_KEY": junk}, crt: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://h", "OTEL_EXPORTER_OTLP_CERTIFICATE": filepath.Join(dir, "missing")}, errPart: "OTEL_EXPORTER_OTLP_CERTIFICATE: open "},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://h", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": junk}, errPart: "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE " + junk + ": no PEM certificate"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://h", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": cert}, errPart: "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY: set both or neither"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://h", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": cert, "OTEL_EXPORTER_OTLP_CLIENT_KEY": junk}, errPart: "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY: tls:"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_EXPORTER_OTLP_CERTIFICATE": ca}, errPart: "http://h/v1/traces: the OTLP endpoint is plain http"},
	} {
		cfg, err := readExporterConfig(envOf(c.env), os.ReadFile)
		if (err == nil) != (c.errPart == "") || (err != nil && !strings.Contains(err.Error(), c.errPart)) {
			t.Errorf("%v: error %v, want one containing %q", c.env, err, c.errPart)
			continue
		}
		if err == nil && ((cfg.tls != nil && cfg.tls.RootCAs != nil) != c.roots || (cfg.tls != nil && len(cfg.tls.Certificates) == 1) != c.crt) {
			t.Errorf("%v: TLS config %+v", c.env, cfg.tls)
		}
	}
}

// selfSigned is a throwaway certificate for 127.0.0.1 and its key, PEM.
func selfSigned(t *testing.T, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		IsCA:        true, BasicConstraintsValid: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// TestExportTLS: the collector's CA from *_CERTIFICATE is trusted (and the
// system's roots alone are not), and the client certificate is presented.
func TestExportTLS(t *testing.T) {
	clientCert, clientKey := selfSigned(t, "client")
	dir := t.TempDir()
	for name, b := range map[string][]byte{"client.pem": clientCert, "client.key": clientKey} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(clientCert)
	var mu sync.Mutex
	var peer string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if len(r.TLS.PeerCertificates) > 0 {
			peer = r.TLS.PeerCertificates[0].Subject.CommonName
		}
		mu.Unlock()
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	srv.StartTLS()
	defer srv.Close()
	serverPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), serverPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":           srv.URL,
		"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": filepath.Join(dir, "client.pem"),
		"OTEL_EXPORTER_OTLP_CLIENT_KEY":         filepath.Join(dir, "client.key"),
	}
	if err := testExporter(t, env).ExportSpans(t.Context(), ro(stub("a", 1))); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("export to an untrusted server: %v, want a certificate error", err)
	}
	env["OTEL_EXPORTER_OTLP_CERTIFICATE"] = filepath.Join(dir, "ca.pem")
	if err := testExporter(t, env).ExportSpans(t.Context(), ro(stub("a", 1))); err != nil {
		t.Fatalf("export with the server's CA: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if peer != "client" {
		t.Errorf("the server saw client certificate %q, want CN=client", peer)
	}
}
