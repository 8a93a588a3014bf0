package config

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/lazyre"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// This file owns the cache: key (issue 18): a shared cache tier in an OCI
// registry, between the local cache and the forges.
//
//	cache:
//	  oci:
//	    repository: registry.example.com/fullsend/cache
//	    push: true          # push what was fetched from a forge (default false)
//	    plain_http: false   # HTTP instead of HTTPS (default false)
//
// The registry is untrusted storage: everything read from it is verified
// against the pin like forge content (package ocicache, package resolve).
// Its host is the org's explicit choice, so it needs no allowed_domains
// entry. Credentials come from FULLSEND_CACHE_OCI_* or the Docker
// credential store, never from this file.

// Cache is the cache: section.
type Cache struct {
	OCI CacheOCI
}

// CacheOCI is cache.oci. Repository "" means no registry tier.
type CacheOCI struct {
	// Repository is "HOST[:PORT]/PATH" (no scheme, tag or digest).
	Repository string
	// Push pushes every verified, scanned forge fetch to the registry.
	Push bool
	// PlainHTTP talks HTTP instead of HTTPS (never chosen automatically).
	PlainHTTP bool
}

// ociHost is a registry host: a DNS name (letters, digits, '-', dots) or a
// bracketed IPv6 literal, with an optional port.
var (
	ociHost = lazyre.New(`^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$`)
	// ociPathComponent is the OCI distribution grammar of one repository
	// path component.
	ociPathComponent = lazyre.New(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
)

// CheckOCIRepository accepts "HOST[:PORT]/PATH": an explicit registry host
// (it contains a dot or a port, or is localhost, as registries are told
// from Docker Hub short names) and a lower-case repository path. A scheme,
// a tag or a digest is refused.
func CheckOCIRepository(s string) error {
	if strings.Contains(s, "://") {
		return fmt.Errorf("%q: no scheme (write HOST/PATH; set plain_http for HTTP)", s)
	}
	if strings.ContainsAny(s, "@") {
		return fmt.Errorf("%q: a repository, not a digest reference", s)
	}
	host, path, ok := strings.Cut(s, "/")
	if !ok || path == "" {
		return fmt.Errorf("%q: want HOST/PATH, e.g. registry.example.com/fullsend/cache", s)
	}
	if !ociHost.MatchString(host) {
		return fmt.Errorf("%q: %q is not a registry host", s, host)
	}
	if !strings.ContainsAny(host, ".:[") && host != "localhost" {
		return fmt.Errorf("%q: %q is not an explicit registry host (write its full name, e.g. docker.io/%s)", s, host, s)
	}
	if len(s) > 255 {
		return fmt.Errorf("%q: longer than 255 bytes", s)
	}
	for _, c := range strings.Split(path, "/") {
		if !ociPathComponent.MatchString(c) {
			return fmt.Errorf("%q: path component %q must be lower-case letters and digits separated by '.', '_', '__' or '-' (no tag)", s, c)
		}
	}
	return nil
}

// OCILoopback reports whether the host of repository is a loopback
// address or localhost.
func OCILoopback(repository string) bool {
	host, _, _ := strings.Cut(repository, "/")
	if h, _, ok := strings.Cut(host, "]"); ok && strings.HasPrefix(h, "[") {
		host = h[1:]
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

type cacheYAML struct {
	OCI cacheOCIYAML `yaml:"oci"`
}

func (c *cacheYAML) UnknownKey(f *yamlx.Fields, e yamlx.Entry) error {
	ctx(f).warn(e.Key, f.Field(e.Key.Value), "unknown key; ignored (known: oci)")
	return nil
}

// cacheOCIYAML is cache.oci; the file's keys replace the whole setting.
type cacheOCIYAML struct {
	Repository string `yaml:"repository"`
	Push       bool   `yaml:"push"`
	PlainHTTP  bool   `yaml:"plain_http"`
}

func (o *cacheOCIYAML) CheckKey(f *yamlx.Fields, key string) error {
	switch key {
	case "repository":
		if err := CheckOCIRepository(o.Repository); err != nil {
			return f.Errorf(key, yamlx.ErrValue, "%v", err)
		}
	case "":
		return o.done(f)
	}
	return nil
}

func (o *cacheOCIYAML) UnknownKey(f *yamlx.Fields, e yamlx.Entry) error {
	ctx(f).warn(e.Key, f.Field(e.Key.Value), "unknown key; ignored (known: repository, push, plain_http)")
	return nil
}

func (o *cacheOCIYAML) done(f *yamlx.Fields) error {
	p := ctx(f)
	p.c.Cache.OCI = CacheOCI{Repository: o.Repository, Push: o.Push, PlainHTTP: o.PlainHTTP}
	if o.Repository == "" {
		if len(f.Entries()) > 0 {
			return yamlx.Errorf(f.File, f.Node, f.Path+".repository", yamlx.ErrValue, "required (HOST/PATH of the registry repository)")
		}
		return nil
	}
	if o.PlainHTTP && !OCILoopback(o.Repository) {
		p.warn(f.Value("plain_http"), f.Field("plain_http"), "the registry is not on loopback: credentials and cache content travel unencrypted (content is still verified against its pins)")
	}
	return nil
}
