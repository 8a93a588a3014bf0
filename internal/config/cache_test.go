package config

import (
	"strings"
	"testing"
)

// TestCacheOCI: cache.oci is read and checked; errors carry file:line and
// the field; plain_http towards a host that is not loopback is a warning.
func TestCacheOCI(t *testing.T) {
	c, notices, err := Parse("config.yaml", []byte(`version: "1"
cache:
  oci:
    repository: registry.example.com:5000/fullsend/cache
    push: true
`))
	if err != nil {
		t.Fatal(err)
	}
	if o := c.Cache.OCI; o.Repository != "registry.example.com:5000/fullsend/cache" || !o.Push || o.PlainHTTP || len(notices) != 0 {
		t.Fatalf("cache.oci = %+v, notices %q", o, notices)
	}
	if d := Default().Cache.OCI; d != (CacheOCI{}) {
		t.Fatalf("default cache.oci = %+v", d)
	}

	c, notices, err = Parse("config.yaml", []byte("cache:\n  oci: {repository: 127.0.0.1:5000/c, plain_http: true}\n"))
	if err != nil || !c.Cache.OCI.PlainHTTP || len(notices) != 0 {
		t.Fatalf("loopback plain_http: %+v %q %v", c.Cache.OCI, notices, err)
	}
	_, notices, err = Parse("config.yaml", []byte("cache:\n  oci:\n    repository: r.example.com/c\n    plain_http: true\n    retries: 3\n  s3: {}\n"))
	if err != nil || len(notices) != 3 {
		t.Fatalf("notices = %q, %v", notices, err)
	}
	for i, want := range []string{"config.yaml:5: cache.oci.retries: unknown key", "config.yaml:4: cache.oci.plain_http: the registry is not on loopback", "config.yaml:6: cache.s3: unknown key"} {
		if !strings.Contains(strings.Join(notices, "\n"), want) {
			t.Errorf("notice %d: want %q in %q", i, want, notices)
		}
	}

	for _, tc := range []struct{ yaml, want string }{
		{"oci: {repository: https://r.example.com/c}", "config.yaml:2: cache.oci.repository: invalid value"},
		{"oci: {repository: r.example.com/c:latest}", "no tag"},
		{"oci: {repository: r.example.com/c@sha256:abc}", "not a digest reference"},
		{"oci: {repository: fullsend/cache}", "not an explicit registry host"},
		{"oci: {repository: r.example.com}", "want HOST/PATH"},
		{"oci: {repository: r.example.com/Cache}", "lower-case"},
		{"oci: {repository: r_x.example.com/c}", "is not a registry host"},
		{"oci: {push: true}", "config.yaml:2: cache.oci.repository: invalid value: required"},
		{"oci: {retries: 3}", "config.yaml:2: cache.oci.repository: invalid value: required"},
		{"oci: {repository: r.example.com/c, push: maybe}", "cache.oci.push"},
		{"oci: [r.example.com/c]", "cache.oci"},
	} {
		_, _, err := Parse("config.yaml", []byte("cache:\n  "+tc.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want %q", tc.yaml, err, tc.want)
		}
	}
	for _, ok := range []string{"localhost:5000/a", "[::1]:5000/a/b", "r.example.com/a-b/c_d/e.f/g__h", "ghcr.io/org/cache"} {
		if err := CheckOCIRepository(ok); err != nil {
			t.Errorf("CheckOCIRepository(%q) = %v", ok, err)
		}
	}
	for r, want := range map[string]bool{"localhost:5000/a": true, "127.0.0.2/a": true, "[::1]:1/a": true, "r.example.com/a": false, "10.0.0.1:5000/a": false} {
		if got := OCILoopback(r); got != want {
			t.Errorf("OCILoopback(%q) = %v", r, got)
		}
	}
}
