package trace

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
)

// DefaultExportTimeout bounds one export (every attempt and the waits
// between them) when OTEL_EXPORTER_OTLP_TIMEOUT does not say otherwise.
const DefaultExportTimeout = 10 * time.Second

const (
	// defaultEndpoint is where spans go when only OTEL_TRACES_EXPORTER=otlp
	// asks for them.
	defaultEndpoint = "https://localhost:4318"
	// tracesPath is added to OTEL_EXPORTER_OTLP_ENDPOINT's path (never to
	// the traces-specific endpoint, which is used as it is).
	tracesPath = "/v1/traces"
	otlpPrefix = "OTEL_EXPORTER_OTLP_"
)

// exporterConfig is what the OTEL_EXPORTER_OTLP_* variables say about
// where and how spans are sent.
type exporterConfig struct {
	url     string // scheme://host[:port]/path; userinfo and query dropped
	headers map[string]string
	timeout time.Duration // 0: no bound of fullsend's own on an export
	gzip    bool
	tls     *tls.Config // nil: the system's roots and no client certificate
}

// otlpVar returns the traces-specific variable OTEL_EXPORTER_OTLP_TRACES_name
// when it is set (trimmed, not empty) and OTEL_EXPORTER_OTLP_name otherwise,
// with the name of the one that was used ("" when neither is set).
func otlpVar(getenv func(string) string, name string) (key, value string) {
	for _, k := range []string{otlpPrefix + "TRACES_" + name, otlpPrefix + name} {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return k, v
		}
	}
	return "", ""
}

// readExporterConfig reads the OTLP/HTTP exporter's settings. Every setting
// has a traces-specific variable (OTEL_EXPORTER_OTLP_TRACES_*) that wins
// over the general one; a variable fullsend cannot honour is an error
// naming it (a header or URL credential never appears in the error).
func readExporterConfig(getenv func(string) string, readFile func(string) ([]byte, error)) (exporterConfig, error) {
	var cfg exporterConfig
	u, err := endpointURL(getenv)
	if err != nil {
		return cfg, err
	}
	plain := u.Scheme == "http"
	// As the OpenTelemetry Go SDK did: *_INSECURE, when set, decides
	// between http and https whatever the endpoint's scheme.
	if k, v := otlpVar(getenv, "INSECURE"); k != "" {
		plain = strings.EqualFold(v, "true")
	}
	u.Scheme = "https"
	if plain {
		u.Scheme = "http"
	}
	cfg.url = u.String()
	if cfg.tls, err = tlsConfig(getenv, readFile); err != nil {
		return cfg, err
	}
	if plain && cfg.tls != nil {
		return cfg, fmt.Errorf("%s: the OTLP endpoint is plain http, so the certificate variables cannot apply", cfg.url)
	}
	if k, v := otlpVar(getenv, "HEADERS"); k != "" {
		// The traces-specific list replaces the general one, as before.
		if cfg.headers, err = parseHeaders(k, v); err != nil {
			return cfg, err
		}
	}
	cfg.timeout = DefaultExportTimeout
	if k, v := otlpVar(getenv, "TIMEOUT"); k != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			return cfg, fmt.Errorf("%s %q: want a whole number of milliseconds", k, v)
		}
		cfg.timeout = time.Duration(ms) * time.Millisecond
	}
	if k, v := otlpVar(getenv, "COMPRESSION"); k != "" {
		switch strings.ToLower(v) {
		case "gzip":
			cfg.gzip = true
		case "none":
		default:
			return cfg, fmt.Errorf("%s %q: want gzip or none", k, v)
		}
	}
	return cfg, nil
}

// endpointURL is the URL spans are posted to: the traces-specific endpoint
// as it is (its root when it has no path), else the general endpoint with
// /v1/traces added to its path, else https://localhost:4318/v1/traces.
func endpointURL(getenv func(string) string) (*url.URL, error) {
	k := otlpPrefix + "TRACES_ENDPOINT"
	v := strings.TrimSpace(getenv(k))
	signal := v != ""
	if !signal {
		k = otlpPrefix + "ENDPOINT"
		v = strings.TrimSpace(getenv(k))
	}
	if v == "" {
		v = defaultEndpoint
	}
	u, err := url.Parse(v)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the url.Error repeats the value, credentials and all
		}
		return nil, fmt.Errorf("%s: not a URL: %v", k, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s %q: want an http:// or https:// URL with a host (the collector's OTLP/HTTP port, 4318)", k, u.Redacted())
	}
	p := u.Path
	if signal {
		if p == "" {
			p = "/"
		}
	} else {
		p = path.Join(p, tracesPath)
	}
	return &url.URL{Scheme: u.Scheme, Host: u.Host, Path: p}, nil
}

// tlsConfig reads the certificate variables: *_CERTIFICATE names a PEM
// file of the CA certificates to trust (instead of the system's),
// *_CLIENT_CERTIFICATE and *_CLIENT_KEY a client certificate and its key.
// It is nil when none is set.
func tlsConfig(getenv func(string) string, readFile func(string) ([]byte, error)) (*tls.Config, error) {
	var cfg tls.Config
	set := false
	if k, v := otlpVar(getenv, "CERTIFICATE"); k != "" {
		pem, err := readFile(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s %s: no PEM certificate in the file", k, v)
		}
		set = true
	}
	for _, p := range []string{otlpPrefix + "TRACES_", otlpPrefix} {
		kc, kk := p+"CLIENT_CERTIFICATE", p+"CLIENT_KEY"
		vc, vk := strings.TrimSpace(getenv(kc)), strings.TrimSpace(getenv(kk))
		if vc == "" && vk == "" {
			continue
		}
		if vc == "" || vk == "" {
			return nil, fmt.Errorf("%s and %s: set both or neither", kc, kk)
		}
		certPEM, err := readFile(vc)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", kc, err)
		}
		keyPEM, err := readFile(vk)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", kk, err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("%s and %s: %v", kc, kk, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
		set = true
		break // the traces-specific pair wins
	}
	if !set {
		return nil, nil
	}
	return &cfg, nil
}

// parseHeaders reads a W3C baggage-style list, key=value pairs separated by
// commas, each value URL-decoded, spaces around keys and values trimmed;
// empty entries are skipped. Errors name the entry by its key (or its
// position) and never show a value, which is often a credential.
func parseHeaders(k, v string) (map[string]string, error) {
	h := map[string]string{}
	for i, entry := range strings.Split(v, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		name, val, ok := strings.Cut(entry, "=")
		name = strings.TrimSpace(name)
		if !ok {
			return nil, fmt.Errorf("%s: entry %d has no '='", k, i+1)
		}
		if !isToken(name) {
			return nil, fmt.Errorf("%s: entry %d: %q is not a valid header name", k, i+1, name)
		}
		dec, err := url.PathUnescape(val)
		if err != nil {
			return nil, fmt.Errorf("%s: the value of %s is not URL-encoded correctly", k, name)
		}
		if strings.ContainsFunc(dec, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }) {
			return nil, fmt.Errorf("%s: the value of %s has a control character", k, name)
		}
		h[name] = strings.TrimSpace(dec)
	}
	return h, nil
}

// isToken reports whether s is an HTTP token (RFC 9110), the syntax of a
// header name.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
