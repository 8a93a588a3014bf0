// Package ocicachetest runs an in-process OCI registry on loopback for
// tests of the registry cache tier: go-containerregistry's pkg/registry
// behind a wrapper that counts requests, adds latency, fails on demand
// and can serve tampered blobs (a compromised registry).
package ocicachetest

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/fullsend-ai/fullsend/internal/fetch/fetchtest"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// Request is one request the registry received.
type Request struct {
	Method, Path string
}

// Registry is a plain-HTTP registry on 127.0.0.1. Its methods are safe for
// concurrent use.
type Registry struct {
	t    testing.TB
	srv  *httptest.Server
	Host string // 127.0.0.1:PORT

	fetchtest.RequestLog[Request] // SetLatency, Requests, RequestCount, ResetRequests
	down                          atomic.Bool

	mu       sync.Mutex
	tampered map[ref.Digest][]byte
}

// New starts a registry; it stops when the test ends.
func New(t testing.TB) *Registry {
	t.Helper()
	r := &Registry{t: t, tampered: map[ref.Digest][]byte{}}
	inner := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		lat := r.Record(Request{Method: req.Method, Path: req.URL.Path})
		down := r.down.Load()
		r.mu.Lock()
		var bad []byte
		if req.Method == http.MethodGet {
			if _, hex, ok := strings.Cut(req.URL.Path, "/blobs/sha256:"); ok {
				bad = r.tampered[ref.Digest(hex)]
			}
		}
		r.mu.Unlock()
		if lat > 0 {
			time.Sleep(lat)
		}
		if down {
			http.Error(w, "registry down (test)", http.StatusServiceUnavailable)
			return
		}
		if bad != nil {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Length", fmt.Sprint(len(bad)))
			w.Write(bad)
			return
		}
		inner.ServeHTTP(w, req)
	}))
	r.Host = strings.TrimPrefix(r.srv.URL, "http://")
	t.Cleanup(r.srv.Close)
	return r
}

// Repository returns HOST/path.
func (r *Registry) Repository(path string) string { return r.Host + "/" + path }

// SetDown makes every request fail with 503 (on) or be served (off).
func (r *Registry) SetDown(on bool) { r.down.Store(on) }

// TamperBlob makes GETs of the blob sha256:d answer content instead.
func (r *Registry) TamperBlob(d ref.Digest, content []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tampered[d] = append([]byte{}, content...)
}

// PushBlob uploads b to repo (the path below the host) directly, outside
// package ocicache.
func PushBlob(t testing.TB, host, repo string, b []byte) {
	t.Helper()
	resp, err := http.Post("http://"+host+"/v2/"+repo+"/blobs/uploads/", "application/octet-stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("start upload: %s", resp.Status)
	}
	loc := resp.Header.Get("Location")
	if strings.HasPrefix(loc, "/") {
		loc = "http://" + host + loc
	}
	sep := "?"
	if strings.Contains(loc, "?") {
		sep = "&"
	}
	req, _ := http.NewRequest(http.MethodPut, loc+sep+"digest=sha256:"+string(ref.SHA256(b)), bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("finish upload: %s", resp.Status)
	}
}

// PushManifest puts body (an OCI image manifest) under tag in repo
// directly, outside package ocicache: a test re-tagging an entry.
func PushManifest(t testing.TB, host, repo, tag string, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, "http://"+host+"/v2/"+repo+"/manifests/"+tag, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		t.Fatalf("push manifest %s: %s %s", tag, resp.Status, msg)
	}
}

// GetManifest reads the manifest tagged tag in repo.
func GetManifest(t testing.TB, host, repo, tag string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+host+"/v2/"+repo+"/manifests/"+tag, nil)
	req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("get manifest %s: %s %s", tag, resp.Status, b)
	}
	return b
}
