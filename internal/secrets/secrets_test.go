package secrets_test

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/fullsend-ai/fullsend/internal/secrets"
)

const (
	ghValue  = "ghp_realTOKENvalue0123456789"
	antValue = "sk-ant-real-KEY-0123456789"
)

func broker(t testing.TB) (*secrets.Broker, string, string) {
	t.Helper()
	b, err := secrets.New([]secrets.Secret{
		{Name: "GH_TOKEN", Value: ghValue, Hosts: []string{"api.github.com", "*.githubusercontent.com", "127.0.0.1:4000"}},
		{Name: "ANTHROPIC_API_KEY", Value: antValue, Hosts: []string{"api.anthropic.com"}},
	}, secrets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	env := b.Env()
	return b, env["GH_TOKEN"], env["ANTHROPIC_API_KEY"]
}

func TestPlaceholdersPerRun(t *testing.T) {
	b1, gh1, ant1 := broker(t)
	_, gh2, _ := broker(t)
	if gh1 == gh2 || gh1 == ant1 || !strings.HasPrefix(gh1, secrets.PlaceholderPrefix) || len(gh1) != len(secrets.PlaceholderPrefix)+40 {
		t.Fatalf("placeholders %q %q %q", gh1, gh2, ant1)
	}
	for _, v := range b1.Env() {
		if strings.Contains(v, ghValue) || strings.Contains(v, antValue) {
			t.Fatal("a real value in the sandbox env")
		}
	}
	if got := strings.Join(b1.Names(), ","); got != "ANTHROPIC_API_KEY,GH_TOKEN" {
		t.Fatal(got)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		s    []secrets.Secret
		want string
	}{
		{[]secrets.Secret{{Name: "1X", Value: "v", Hosts: []string{"a.com"}}}, "not an environment variable name"},
		{[]secrets.Secret{{Name: "X", Value: "", Hosts: []string{"a.com"}}}, "empty value"},
		{[]secrets.Secret{{Name: "X", Value: "v"}}, "no hosts"},
		{[]secrets.Secret{{Name: "X", Value: "v", Hosts: []string{"a b"}}}, "secret host"},
		{[]secrets.Secret{{Name: "X", Value: "v", Hosts: []string{"a.com:0"}}}, "bad port"},
		{[]secrets.Secret{{Name: "X", Value: "v", Hosts: []string{"a.com"}}, {Name: "X", Value: "w", Hosts: []string{"a.com"}}}, "declared twice"},
	} {
		_, err := secrets.New(tc.s, secrets.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.s, err, tc.want)
		}
	}
}

func TestIntercepts(t *testing.T) {
	b, _, _ := broker(t)
	for _, tc := range []struct {
		host string
		port int
		want bool
	}{
		{"api.github.com", 443, true},
		{"API.GitHub.com.", 443, true},
		{"api.github.com", 80, false}, // no port = 443 only
		{"github.com", 443, false},
		{"raw.githubusercontent.com", 443, true},
		{"githubusercontent.com", 443, false},
		{"127.0.0.1", 4000, true},
		{"127.0.0.1", 4001, false},
		{"api.anthropic.com", 443, true},
		{"evil.com", 443, false},
	} {
		if got := b.Intercepts(tc.host, tc.port); got != tc.want {
			t.Errorf("Intercepts(%s, %d) = %v", tc.host, tc.port, got)
		}
	}
}

func TestRewriteForms(t *testing.T) {
	b, gh, ant := broker(t)
	api := secrets.Dest{Host: "api.github.com", Port: 443, TLS: true}
	h := http.Header{}
	h.Set("Authorization", "token "+gh)
	h.Set("X-Custom", "a "+gh+" b "+gh)
	h["x-lower-case"] = []string{gh} // a non-canonical key, as a raw header map may hold
	h.Add("X-Multi", "none")
	h.Add("X-Multi", gh)
	h.Set("X-Other", gh[:len(gh)-1]) // not a placeholder: left alone
	h.Set("X-Case", strings.ToUpper(gh))
	used, err := b.Rewrite(h, api)
	if err != nil {
		t.Fatal(err)
	}
	if len(used) != 1 || used[0] != "GH_TOKEN" {
		t.Fatal(used)
	}
	want := map[string][]string{
		"Authorization": {"token " + ghValue},
		"X-Custom":      {"a " + ghValue + " b " + ghValue},
		"x-lower-case":  {ghValue},
		"X-Multi":       {"none", ghValue},
		"X-Other":       {gh[:len(gh)-1]},
		"X-Case":        {strings.ToUpper(gh)}, // placeholders are exact bytes
	}
	for k, v := range want {
		if strings.Join(h[k], "|") != strings.Join(v, "|") {
			t.Errorf("%s = %q, want %q", k, h[k], v)
		}
	}

	// x-api-key of the other secret to its own host.
	h = http.Header{"X-Api-Key": {ant}}
	if _, err := b.Rewrite(h, secrets.Dest{Host: "api.anthropic.com", Port: 443, TLS: true}); err != nil || h.Get("X-Api-Key") != antValue {
		t.Fatal(err, h)
	}
}

func TestRewriteBasic(t *testing.T) {
	b, gh, _ := broker(t)
	for _, scheme := range []string{"Basic", "basic", "BASIC"} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
			h := http.Header{"Authorization": {scheme + " " + enc.EncodeToString([]byte("x-access-token:"+gh))}}
			if _, err := b.Rewrite(h, secrets.Dest{Host: "api.github.com", Port: 443, TLS: true}); err != nil {
				t.Fatal(err)
			}
			v := h.Get("Authorization")
			dec, err := base64.StdEncoding.DecodeString(v[6:])
			if err != nil || string(dec) != "x-access-token:"+ghValue || !strings.EqualFold(v[:6], "basic ") {
				t.Fatalf("%s: %q %q %v", scheme, v, dec, err)
			}
		}
	}
	// Basic credentials to another host: refused.
	h := http.Header{"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("u:"+gh))}}
	if _, err := b.Rewrite(h, secrets.Dest{Host: "evil.com", Port: 443, TLS: true}); !isRefusal(err, "GH_TOKEN") {
		t.Fatal(err)
	}
}

func isRefusal(err error, name string) bool {
	var r *secrets.Refusal
	return errors.As(err, &r) && r.Secret == name
}

func TestRewriteRefusals(t *testing.T) {
	b, gh, ant := broker(t)
	for _, tc := range []struct {
		name string
		h    http.Header
		d    secrets.Dest
		sec  string
	}{
		{"other host", http.Header{"Authorization": {"Bearer " + gh}}, secrets.Dest{Host: "evil.com", Port: 443, TLS: true}, "GH_TOKEN"},
		{"other port", http.Header{"Authorization": {"Bearer " + gh}}, secrets.Dest{Host: "api.github.com", Port: 8443, TLS: true}, "GH_TOKEN"},
		{"other secret's host", http.Header{"X-Api-Key": {gh}}, secrets.Dest{Host: "api.anthropic.com", Port: 443, TLS: true}, "GH_TOKEN"},
		{"one good one bad", http.Header{"A": {gh}, "B": {ant}}, secrets.Dest{Host: "api.github.com", Port: 443, TLS: true}, "ANTHROPIC_API_KEY"},
		{"in a field name", http.Header{"X-" + gh: {"v"}}, secrets.Dest{Host: "api.github.com", Port: 443, TLS: true}, "GH_TOKEN"},
		{"plain http to a public host", http.Header{"Authorization": {gh}}, secrets.Dest{Host: "api.github.com", Port: 443}, "GH_TOKEN"},
	} {
		before := tc.h.Clone()
		_, err := b.Rewrite(tc.h, tc.d)
		if !isRefusal(err, tc.sec) {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if strings.Contains(err.Error(), ghValue) || strings.Contains(err.Error(), antValue) {
			t.Errorf("%s: the refusal holds a value: %v", tc.name, err)
		}
		for k, v := range before {
			if strings.Join(tc.h[k], "|") != strings.Join(v, "|") {
				t.Errorf("%s: header %s changed on refusal: %q", tc.name, k, tc.h[k])
			}
		}
	}
	// Plain http to a loopback host service of the secret: swapped.
	h := http.Header{"Authorization": {gh}}
	if _, err := b.Rewrite(h, secrets.Dest{Host: "127.0.0.1", Port: 4000}); err != nil || h.Get("Authorization") != ghValue {
		t.Fatal(err, h)
	}
	// Check and CheckHeader: anywhere at all.
	d := secrets.Dest{Host: "api.github.com", Port: 443, TLS: true}
	if !isRefusal(b.Check("/x?token="+gh, "request target", d), "GH_TOKEN") || b.Check("/x", "request target", d) != nil {
		t.Fatal("Check")
	}
	if !isRefusal(b.CheckHeader(http.Header{"Proxy-Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte("u:"+ant))}}, "CONNECT", d), "ANTHROPIC_API_KEY") {
		t.Fatal("CheckHeader basic")
	}
}

// readAllOneByte reads r one byte at a time, so every read boundary is
// tried.
func readAllOneByte(r io.Reader) ([]byte, error) {
	return io.ReadAll(iotest.OneByteReader(r))
}

func TestBodyScanner(t *testing.T) {
	b, gh, _ := broker(t)
	d := secrets.Dest{Host: "api.github.com", Port: 443, TLS: true}
	var refused []*secrets.Refusal
	body := "prefix " + secrets.PlaceholderPrefix + " not quite, then " + gh + " suffix"
	bs := b.NewBodyScanner(io.NopCloser(iotest.OneByteReader(strings.NewReader(body))), d, func(r *secrets.Refusal) { refused = append(refused, r) })
	got, err := readAllOneByte(bs)
	if !isRefusal(err, "GH_TOKEN") || len(refused) != 1 || bs.Refusal() == nil || bs.Refusal().Where != "request body" {
		t.Fatalf("%v %v", err, refused)
	}
	if bytes.Contains(got, []byte(gh)) {
		t.Fatalf("the placeholder went through: %q", got)
	}
	if !strings.HasPrefix(body, string(got)) {
		t.Fatalf("passed %q", got)
	}
	// A clean body passes whole, split anywhere.
	clean := "data: " + secrets.PlaceholderPrefix + "zz\n\n" + strings.Repeat("x", 70000)
	bs = b.NewBodyScanner(io.NopCloser(strings.NewReader(clean)), d, nil)
	got, err = readAllOneByte(bs)
	if err != nil || string(got) != clean {
		t.Fatal(err, len(got))
	}
}

// TestBodyScannerStreams: a read returns what cannot begin a placeholder
// without waiting for more input.
func TestBodyScannerStreams(t *testing.T) {
	b, _, _ := broker(t)
	pr, pw := io.Pipe()
	bs := b.NewBodyScanner(pr, secrets.Dest{Host: "a", Port: 443}, nil)
	go pw.Write([]byte("event: one\n\n"))
	buf := make([]byte, 100)
	n, err := bs.Read(buf)
	if err != nil || string(buf[:n]) != "event: one\n\n" {
		t.Fatalf("%q %v", buf[:n], err)
	}
	// A tail that may begin a placeholder waits for the next bytes.
	go pw.Write([]byte("x fulls"))
	n, _ = bs.Read(buf)
	if string(buf[:n]) != "x " {
		t.Fatalf("%q", buf[:n])
	}
	go pw.Close()
	n, _ = bs.Read(buf)
	if string(buf[:n]) != "fulls" {
		t.Fatalf("%q", buf[:n])
	}
}

func TestScrub(t *testing.T) {
	b, gh, ant := broker(t)
	in := "echo: " + ghValue + " and " + antValue + " " + ghValue[:5]
	got, err := readAllOneByte(b.NewScrubber(io.NopCloser(strings.NewReader(in))))
	if err != nil || string(got) != "echo: "+gh+" and "+ant+" "+ghValue[:5] {
		t.Fatalf("%q %v", got, err)
	}
	h := http.Header{"X-Echo": {"Bearer " + ghValue}}
	b.ScrubHeader(h)
	if h.Get("X-Echo") != "Bearer "+gh {
		t.Fatal(h)
	}
}

func TestAuthority(t *testing.T) {
	b, _, _ := broker(t)
	ca := b.CA()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca.PEM()) || bytes.Contains(ca.PEM(), []byte("PRIVATE")) {
		t.Fatal("CA PEM")
	}
	if !bytes.HasSuffix(ca.Bundle(), ca.PEM()) {
		t.Fatal("bundle does not end with the run CA")
	}
	verify := func(host string) error {
		leaf, err := ca.Leaf(host)
		if err != nil {
			return err
		}
		_, err = leaf.Leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots})
		return err
	}
	for _, h := range []string{"api.github.com", "raw.githubusercontent.com", "127.0.0.1", "api.anthropic.com"} {
		if err := verify(h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	// The CA issues leaves for the secret hosts only, and is
	// name-constrained to their DNS names: a leaf signed for another name
	// does not verify.
	for _, h := range []string{"evil.com", "github.com.evil.com", "10.0.0.1", "githubusercontent.com"} {
		if err := verify(h); err == nil {
			t.Errorf("%s: a leaf outside the secret hosts", h)
		}
	}
	if _, err := secrets.SignUnchecked(ca, "evil.com"); err == nil {
		t.Error("a leaf for evil.com verified under the name-constrained CA")
	}
	// Without an IP host, the CA excludes every address.
	b2, err := secrets.New([]secrets.Secret{{Name: "A", Value: "v", Hosts: []string{"api.example.com"}}}, secrets.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(b2.CA().Certificate().ExcludedIPRanges) != 2 || len(ca.Certificate().ExcludedIPRanges) != 0 {
		t.Error("address constraints")
	}
	l1, _ := ca.Leaf("api.github.com")
	l2, _ := ca.Leaf("API.github.com.")
	if l1 != l2 || l1.Leaf.NotAfter.Sub(l1.Leaf.NotBefore) > secrets.LeafValidity+secrets.LeafRenew {
		t.Fatal("leaf cache or validity")
	}
	env := secrets.CAEnv("/x/ca.pem")
	for _, k := range []string{"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"} {
		if env[k] != "/x/ca.pem" {
			t.Errorf("%s = %q", k, env[k])
		}
	}
}

// TestSealOpen: a sealed broker opens, with the same key only, into the
// same placeholders, values, hosts and CA; altered bytes are refused.
func TestSealOpen(t *testing.T) {
	b, gh, _ := broker(t)
	key := bytes.Repeat([]byte{7}, secrets.SealKeyBytes)
	blob, err := b.Seal(key)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(blob, []byte(ghValue)) || bytes.Contains(blob, []byte(gh)) {
		t.Fatal("the sealed bytes hold a value or placeholder in clear")
	}
	o, err := secrets.Open(key, blob)
	if err != nil {
		t.Fatal(err)
	}
	if o.Env()["GH_TOKEN"] != gh || !o.Intercepts("raw.githubusercontent.com", 443) || !o.Intercepts("127.0.0.1", 4000) || o.Intercepts("evil.com", 443) {
		t.Fatalf("opened broker differs: %v", o.Env())
	}
	h := http.Header{"Authorization": {"token " + gh}}
	if _, err := o.Rewrite(h, secrets.Dest{Host: "api.github.com", Port: 443, TLS: true}); err != nil || h.Get("Authorization") != "token "+ghValue {
		t.Fatal(err, h)
	}
	if !bytes.Equal(o.CA().PEM(), b.CA().PEM()) {
		t.Fatal("CA differs")
	}
	leaf, err := o.CA().Leaf("api.github.com")
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(b.CA().PEM())
	if _, err := leaf.Leaf.Verify(x509.VerifyOptions{DNSName: "api.github.com", Roots: roots}); err != nil {
		t.Fatal(err)
	}
	other := bytes.Repeat([]byte{8}, secrets.SealKeyBytes)
	if _, err := secrets.Open(other, blob); !errors.Is(err, secrets.ErrSealed) {
		t.Fatal(err)
	}
	blob[len(blob)-1] ^= 1
	if _, err := secrets.Open(key, blob); !errors.Is(err, secrets.ErrSealed) {
		t.Fatal(err)
	}
	opaque, _ := secrets.New([]secrets.Secret{{Name: "A", Value: "v", Hosts: []string{"a.com"}}}, secrets.Options{Roots: x509.NewCertPool()})
	if _, err := opaque.Seal(key); err == nil {
		t.Fatal("a broker with an opaque root pool sealed")
	}
}
