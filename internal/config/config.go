package config

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/netguard"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// FileName is the name of the org configuration inside the fullsend dir.
const FileName = "config.yaml"

// Defaults.
const (
	DefaultTimeout         = 30 * time.Second
	DefaultMaxSizeBytes    = 10 << 20
	DefaultMaxDepth        = 10
	DefaultMaxResources    = 50
	DefaultLocalThreshold  = 0.92
	DefaultRemoteThreshold = 0.95
	DefaultLLMGuardTimeout = 10 * time.Second
	FailClosed             = "closed"
	FailOpen               = "open"
)

// Config is the org configuration.
type Config struct {
	Version                string
	Runtime                string
	Agents                 []Agent
	AllowedRemoteResources []string // canonical prefixes
	Sandbox                Sandbox
	Security               Security
	Forges                 []Forge
	Runtimes               Runtimes // runtimes: (runtimes.go)
	Cache                  Cache    // cache: (cache.go)
	Path                   string   // file it came from ("" = defaults)
}

// Agent is a harness this org runs.
type Agent struct {
	Source string
}

// Sandbox selects the default sandbox backend.
type Sandbox struct {
	Backend    string // "local" (default) | "docker" | "kubernetes"
	Docker     Docker
	Kubernetes Kubernetes // kubernetes.go
	Limits     Limits     // sandbox.limits: every field set (DefaultLimits for keys the file omits)
	// HostServices are sandbox.host_services: loopback "IP:PORT" endpoints of
	// the runner host the sandbox reaches at the same address (runtimes.go).
	HostServices []string
}

// Docker configures the docker backend.
type Docker struct {
	Host, OCIRuntime, Image string
}

// Security holds the security settings.
type Security struct {
	FailMode string // "closed" (default) | "open"
	// AllowedEnvNames are env names a harness may set although
	// RefusedEnvPattern matches them (security.allowed_env_names).
	AllowedEnvNames []string
	RemoteResources RemoteResources
	Scan            Scan
	LLMGuard        LLMGuard
}

// RemoteResources bounds remote fetching.
type RemoteResources struct {
	AllowedDomains         []string // nil = unset (see EffectiveAllowedDomains)
	AllowedPrivateNetworks []netip.Prefix
	TrustedHarnessPrefixes []string // canonical prefixes
	Timeout                time.Duration
	MaxSizeBytes           int64
	MaxDepth               int
	MaxResources           int
}

// Scan holds the per-origin scan policies.
type Scan struct {
	Local, Remote ScanPolicy
}

// ScanPolicy is the scan policy for one origin. ContextInjection nil means
// the default (on).
type ScanPolicy struct {
	ContextInjection *bool
	MLThreshold      float64
}

// LLMGuard configures the optional ML prompt-injection classifier.
type LLMGuard struct {
	URL      string
	TokenEnv string
	Timeout  time.Duration
}

// Forge is one forge host.
type Forge struct {
	Host     string // host[:port] as it appears in URLs, lower-case
	Type     string // "github" | "gitlab"
	APIURL   string // canonical https URL
	TokenEnv string
}

// Default returns the configuration used when there is no config.yaml.
func Default() *Config {
	return &Config{
		Version: "1",
		Sandbox: Sandbox{Backend: "local", Limits: DefaultLimits()},
		Security: Security{
			FailMode: FailClosed,
			RemoteResources: RemoteResources{
				Timeout:      DefaultTimeout,
				MaxSizeBytes: DefaultMaxSizeBytes,
				MaxDepth:     DefaultMaxDepth,
				MaxResources: DefaultMaxResources,
			},
			Scan: Scan{
				Local:  ScanPolicy{MLThreshold: DefaultLocalThreshold},
				Remote: ScanPolicy{MLThreshold: DefaultRemoteThreshold},
			},
			LLMGuard: LLMGuard{Timeout: DefaultLLMGuardTimeout},
		},
		Forges: DefaultForges(),
	}
}

// DefaultForges are github.com and gitlab.com.
func DefaultForges() []Forge {
	return []Forge{
		{Host: "github.com", Type: "github", APIURL: "https://api.github.com", TokenEnv: "GITHUB_TOKEN"},
		{Host: "gitlab.com", Type: "gitlab", APIURL: "https://gitlab.com/api/v4", TokenEnv: "GITLAB_TOKEN"},
	}
}

// Load reads <fullsendDir>/config.yaml. A missing file yields Default().
// Notices are one-line messages for the user (ignored keys, warnings).
func Load(fullsendDir string) (*Config, []string, error) {
	p := filepath.Join(fullsendDir, FileName)
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return Default(), nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("config %s: %w", p, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, yamlx.MaxFileSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("config %s: %w", p, err)
	}
	return Parse(p, data)
}

// ForgeByHost returns the forge whose host[:port] equals hostport (case
// insensitive; a default ":443" is ignored).
func (c *Config) ForgeByHost(hostport string) (Forge, bool) {
	h := strings.TrimSuffix(strings.ToLower(hostport), ":443")
	for _, f := range c.Forges {
		if f.Host == h {
			return f, true
		}
	}
	return Forge{}, false
}

// EffectiveAllowedDomains returns security.remote_resources.allowed_domains
// when set; otherwise the host names of allowed_remote_resources plus the
// API hosts of forges whose web host is among them.
func (c *Config) EffectiveAllowedDomains() []string {
	if c.Security.RemoteResources.AllowedDomains != nil {
		return slices.Clone(c.Security.RemoteResources.AllowedDomains)
	}
	var out []string
	add := func(h string) {
		if h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	for _, p := range c.AllowedRemoteResources {
		add(ref.Hostname(p))
	}
	for _, f := range c.Forges {
		web := ref.Hostname("https://" + f.Host + "/")
		if slices.Contains(out, web) {
			add(ref.Hostname(f.APIURL))
		}
	}
	return out
}

// ignoredKeys are top-level keys of real fullsend config files that belong to
// features outside the runner.
var ignoredKeys = map[string]bool{
	"dispatch": true, "repos": true, "roles": true, "create_issues": true, "inference": true,
	"org": true, "organization": true, "labels": true, "triggers": true, "notifications": true,
	"schedule": true, "schedules": true, "kill_switch": true, "autonomy": true, "app": true,
	"apps": true, "github_app": true, "projects": true, "slack": true, "defaults": true,
	"escalation": true, "budgets": true, "admins": true, "teams": true,
}

type parser struct {
	file    string
	notices []string
}

func (p *parser) warn(n *yaml.Node, field, msg string) {
	p.notices = append(p.notices, fmt.Sprintf("%s:%d: %s: %s", p.file, n.Line, field, msg))
}

// Parse decodes and validates a config file. name is used in messages.
func Parse(name string, data []byte) (*Config, []string, error) {
	p := &parser{file: name}
	c := Default()
	c.Path = name
	root, err := yamlx.Parse(name, data)
	if err != nil {
		return nil, nil, err
	}
	pairs, err := yamlx.Pairs(name, "", root)
	if err != nil {
		return nil, nil, err
	}
	for _, kv := range pairs {
		k, v := kv[0], kv[1]
		switch key := k.Value; key {
		case "version":
			s, err := yamlx.String(name, key, v)
			if err != nil {
				return nil, nil, err
			}
			if s != "1" {
				return nil, nil, yamlx.Errorf(name, v, key, yamlx.ErrValue, "unsupported version %q (want \"1\")", s)
			}
			c.Version = s
		case "runtime":
			if c.Runtime, err = yamlx.String(name, key, v); err != nil {
				return nil, nil, err
			}
			if !validName(c.Runtime) {
				return nil, nil, yamlx.Errorf(name, v, key, yamlx.ErrValue, "%q is not a runtime name", c.Runtime)
			}
		case "agents":
			if c.Agents, err = p.agents(v); err != nil {
				return nil, nil, err
			}
		case "allowed_remote_resources":
			if c.AllowedRemoteResources, err = prefixes(name, key, v); err != nil {
				return nil, nil, err
			}
		case "sandbox":
			if err := p.sandbox(v, &c.Sandbox); err != nil {
				return nil, nil, err
			}
		case "security":
			if err := p.security(v, &c.Security); err != nil {
				return nil, nil, err
			}
		case "forges":
			if c.Forges, err = p.forges(v); err != nil {
				return nil, nil, err
			}
		case "runtimes":
			if c.Runtimes, err = p.runtimes(v); err != nil {
				return nil, nil, err
			}
		case "cache":
			if c.Cache, err = p.cache(v); err != nil {
				return nil, nil, err
			}
		default:
			if ignoredKeys[key] {
				p.warn(k, key, "belongs to fullsend features outside the runner; ignored")
			} else {
				p.warn(k, key, "unknown key; ignored")
			}
		}
	}
	return c, p.notices, nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
			return false
		}
	}
	return true
}

// ValidEnvName reports whether s is a POSIX environment variable name.
func ValidEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch == '_' || i > 0 && ch >= '0' && ch <= '9') {
			return false
		}
	}
	return true
}

func prefixes(file, field string, n *yaml.Node) ([]string, error) {
	list, err := yamlx.Strings(file, field, n)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for i, s := range list {
		c, err := ref.CanonicalPrefix(s)
		if err != nil {
			return nil, yamlx.Wrap(file, n.Content[i], fmt.Sprintf("%s[%d]", field, i), err)
		}
		out = append(out, c)
	}
	return out, nil
}

func (p *parser) agents(n *yaml.Node) ([]Agent, error) {
	if yamlx.IsNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, yamlx.Errorf(p.file, n, "agents", yamlx.ErrType, "expected a list")
	}
	var out []Agent
	for i, item := range n.Content {
		field := fmt.Sprintf("agents[%d]", i)
		if item.Kind == yaml.ScalarNode {
			out = append(out, Agent{Source: item.Value})
			continue
		}
		pairs, err := yamlx.Pairs(p.file, field, item)
		if err != nil {
			return nil, err
		}
		var a Agent
		for _, kv := range pairs {
			switch kv[0].Value {
			case "source":
				if a.Source, err = yamlx.String(p.file, field+".source", kv[1]); err != nil {
					return nil, err
				}
			default:
				p.warn(kv[0], field+"."+kv[0].Value, "unknown key; ignored")
			}
		}
		if a.Source == "" {
			return nil, yamlx.Errorf(p.file, item, field+".source", yamlx.ErrValue, "required")
		}
		if _, err := ref.Classify(a.Source); err != nil {
			return nil, yamlx.Wrap(p.file, item, field+".source", err)
		}
		out = append(out, a)
	}
	return out, nil
}

func (p *parser) sandbox(n *yaml.Node, s *Sandbox) error {
	pairs, err := yamlx.Pairs(p.file, "sandbox", n)
	if err != nil {
		return err
	}
	for _, kv := range pairs {
		k, v := kv[0], kv[1]
		field := "sandbox." + k.Value
		switch k.Value {
		case "backend":
			if s.Backend, err = yamlx.String(p.file, field, v); err != nil {
				return err
			}
			if s.Backend != "local" && s.Backend != "docker" && s.Backend != "kubernetes" {
				return yamlx.Errorf(p.file, v, field, yamlx.ErrValue, "%q is not a backend (local, docker, kubernetes)", s.Backend)
			}
		case "kubernetes":
			if err := p.kubernetes(v, field, &s.Kubernetes); err != nil {
				return err
			}
		case "docker":
			dp, err := yamlx.Pairs(p.file, field, v)
			if err != nil {
				return err
			}
			for _, d := range dp {
				df := field + "." + d[0].Value
				var dst *string
				switch d[0].Value {
				case "host":
					dst = &s.Docker.Host
				case "oci_runtime":
					dst = &s.Docker.OCIRuntime
				case "image":
					dst = &s.Docker.Image
				default:
					return yamlx.Errorf(p.file, d[0], df, yamlx.ErrUnknownField, "")
				}
				if *dst, err = yamlx.String(p.file, df, d[1]); err != nil {
					return err
				}
			}
		case "host_services":
			if s.HostServices, err = p.hostServices(v, field); err != nil {
				return err
			}
		case "limits":
			lp, err := yamlx.Pairs(p.file, field, v)
			if err != nil {
				return err
			}
			for _, l := range lp {
				if err := ParseLimit(p.file, field+"."+l[0].Value, l[0].Value, l[1], &s.Limits); err != nil {
					if errors.Is(err, yamlx.ErrUnknownField) {
						return yamlx.Errorf(p.file, l[0], field+"."+l[0].Value, yamlx.ErrUnknownField, "(known: %s)", strings.Join(LimitKeys, ", "))
					}
					return err
				}
			}
		default:
			p.warn(k, field, "unknown key; ignored")
		}
	}
	return nil
}

func (p *parser) security(n *yaml.Node, s *Security) error {
	pairs, err := yamlx.Pairs(p.file, "security", n)
	if err != nil {
		return err
	}
	for _, kv := range pairs {
		k, v := kv[0], kv[1]
		field := "security." + k.Value
		switch k.Value {
		case "fail_mode":
			if s.FailMode, err = yamlx.String(p.file, field, v); err != nil {
				return err
			}
			if s.FailMode != FailClosed && s.FailMode != FailOpen {
				return yamlx.Errorf(p.file, v, field, yamlx.ErrValue, "%q must be closed or open", s.FailMode)
			}
		case "allowed_env_names":
			if s.AllowedEnvNames, err = yamlx.Strings(p.file, field, v); err != nil {
				return err
			}
			for i, name := range s.AllowedEnvNames {
				if !ValidEnvName(name) {
					return yamlx.Errorf(p.file, v.Content[i], fmt.Sprintf("%s[%d]", field, i), yamlx.ErrValue, "%q is not an environment variable name", name)
				}
			}
		case "remote_resources":
			if err := p.remote(v, field, &s.RemoteResources); err != nil {
				return err
			}
		case "scan":
			if err := p.scan(v, field, &s.Scan); err != nil {
				return err
			}
		case "llm_guard":
			if err := p.llmGuard(v, field, &s.LLMGuard); err != nil {
				return err
			}
		default:
			return yamlx.Errorf(p.file, k, field, yamlx.ErrUnknownField, "")
		}
	}
	return nil
}

func (p *parser) remote(n *yaml.Node, path string, r *RemoteResources) error {
	pairs, err := yamlx.Pairs(p.file, path, n)
	if err != nil {
		return err
	}
	for _, kv := range pairs {
		k, v := kv[0], kv[1]
		field := path + "." + k.Value
		switch k.Value {
		case "allowed_domains":
			list, err := yamlx.Strings(p.file, field, v)
			if err != nil {
				return err
			}
			r.AllowedDomains = make([]string, 0, len(list))
			for i, d := range list {
				if err := netguard.CheckHostPattern(d); err != nil {
					return yamlx.Wrap(p.file, v.Content[i], fmt.Sprintf("%s[%d]", field, i), err)
				}
				r.AllowedDomains = append(r.AllowedDomains, strings.TrimSuffix(strings.ToLower(d), "."))
			}
		case "allowed_private_networks":
			list, err := yamlx.Strings(p.file, field, v)
			if err != nil {
				return err
			}
			r.AllowedPrivateNetworks = nil
			for i, s := range list {
				pf, err := netip.ParsePrefix(s)
				if err != nil {
					return yamlx.Errorf(p.file, v.Content[i], fmt.Sprintf("%s[%d]", field, i), yamlx.ErrValue, "%q is not a CIDR like 10.0.0.0/8", s)
				}
				r.AllowedPrivateNetworks = append(r.AllowedPrivateNetworks, pf.Masked())
			}
		case "trusted_harness_prefixes":
			if r.TrustedHarnessPrefixes, err = prefixes(p.file, field, v); err != nil {
				return err
			}
		case "timeout":
			if r.Timeout, err = yamlx.Duration(p.file, field, v); err != nil {
				return err
			}
			if r.Timeout <= 0 {
				return yamlx.Errorf(p.file, v, field, yamlx.ErrValue, "must be positive")
			}
		case "max_size_bytes", "max_depth", "max_resources":
			x, err := yamlx.Int(p.file, field, v)
			if err != nil {
				return err
			}
			if x <= 0 || x > 1<<40 {
				return yamlx.Errorf(p.file, v, field, yamlx.ErrValue, "must be a positive integer")
			}
			switch k.Value {
			case "max_size_bytes":
				r.MaxSizeBytes = x
			case "max_depth":
				r.MaxDepth = int(x)
			default:
				r.MaxResources = int(x)
			}
		default:
			return yamlx.Errorf(p.file, k, field, yamlx.ErrUnknownField, "")
		}
	}
	return nil
}

func (p *parser) scan(n *yaml.Node, path string, s *Scan) error {
	pairs, err := yamlx.Pairs(p.file, path, n)
	if err != nil {
		return err
	}
	for _, kv := range pairs {
		k, v := kv[0], kv[1]
		field := path + "." + k.Value
		var pol *ScanPolicy
		switch k.Value {
		case "local":
			pol = &s.Local
		case "remote":
			pol = &s.Remote
		default:
			return yamlx.Errorf(p.file, k, field, yamlx.ErrUnknownField, "")
		}
		sp, err := yamlx.Pairs(p.file, field, v)
		if err != nil {
			return err
		}
		for _, e := range sp {
			ef := field + "." + e[0].Value
			switch e[0].Value {
			case "context_injection":
				b, err := yamlx.Bool(p.file, ef, e[1])
				if err != nil {
					return err
				}
				if !b && pol == &s.Remote {
					return yamlx.Errorf(p.file, e[1], ef, yamlx.ErrValue, "the context-injection scan cannot be turned off for remote resources")
				}
				pol.ContextInjection = &b
			case "ml_threshold":
				f, err := yamlx.Float(p.file, ef, e[1])
				if err != nil {
					return err
				}
				if !(f > 0 && f <= 1) {
					return yamlx.Errorf(p.file, e[1], ef, yamlx.ErrValue, "must be in (0, 1]")
				}
				pol.MLThreshold = f
			default:
				return yamlx.Errorf(p.file, e[0], ef, yamlx.ErrUnknownField, "")
			}
		}
	}
	return nil
}

func (p *parser) llmGuard(n *yaml.Node, path string, g *LLMGuard) error {
	pairs, err := yamlx.Pairs(p.file, path, n)
	if err != nil {
		return err
	}
	for _, kv := range pairs {
		k, v := kv[0], kv[1]
		field := path + "." + k.Value
		switch k.Value {
		case "url":
			s, err := yamlx.String(p.file, field, v)
			if err != nil {
				return err
			}
			u, err := checkServiceURL(s)
			if err != nil {
				return yamlx.Wrap(p.file, v, field, err)
			}
			g.URL = u
		case "token_env":
			if g.TokenEnv, err = yamlx.String(p.file, field, v); err != nil {
				return err
			}
			if !ValidEnvName(g.TokenEnv) {
				return yamlx.Errorf(p.file, v, field, yamlx.ErrValue, "%q is not an environment variable name", g.TokenEnv)
			}
		case "timeout":
			if g.Timeout, err = yamlx.Duration(p.file, field, v); err != nil {
				return err
			}
			if g.Timeout <= 0 {
				return yamlx.Errorf(p.file, v, field, yamlx.ErrValue, "must be positive")
			}
		default:
			return yamlx.Errorf(p.file, k, field, yamlx.ErrUnknownField, "")
		}
	}
	return nil
}

// checkServiceURL accepts an https URL, or plain http to a loopback address
// (a classifier running beside the runner).
func checkServiceURL(s string) (string, error) {
	if rest, ok := strings.CutPrefix(s, "http://"); ok {
		host := rest
		if i := strings.IndexAny(host, "/?#"); i >= 0 {
			host = host[:i]
		}
		h := strings.TrimPrefix(host, "[")
		if i := strings.LastIndexAny(h, "]:"); i >= 0 && (strings.HasPrefix(host, "[") || strings.Count(h, ":") == 1) {
			h = h[:i]
		}
		if h == "localhost" {
			return s, nil
		}
		if a, err := netip.ParseAddr(h); err == nil && a.IsLoopback() {
			return s, nil
		}
		return "", fmt.Errorf("%q: plain http is only allowed to a loopback address", s)
	}
	return ref.Canonicalize(s)
}

func (p *parser) forges(n *yaml.Node) ([]Forge, error) {
	if yamlx.IsNull(n) {
		return DefaultForges(), nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, yamlx.Errorf(p.file, n, "forges", yamlx.ErrType, "expected a list")
	}
	var out []Forge
	for i, item := range n.Content {
		field := fmt.Sprintf("forges[%d]", i)
		pairs, err := yamlx.Pairs(p.file, field, item)
		if err != nil {
			return nil, err
		}
		var f Forge
		for _, kv := range pairs {
			k, v := kv[0], kv[1]
			ff := field + "." + k.Value
			switch k.Value {
			case "host":
				s, err := yamlx.String(p.file, ff, v)
				if err != nil {
					return nil, err
				}
				c, err := ref.Canonicalize("https://" + s + "/")
				if err != nil || strings.ContainsAny(s, "/?#@") || c == "" {
					return nil, yamlx.Errorf(p.file, v, ff, yamlx.ErrValue, "%q is not a host[:port]", s)
				}
				f.Host = strings.TrimSuffix(strings.TrimPrefix(c, "https://"), "/")
			case "type":
				if f.Type, err = yamlx.String(p.file, ff, v); err != nil {
					return nil, err
				}
				if f.Type != "github" && f.Type != "gitlab" {
					return nil, yamlx.Errorf(p.file, v, ff, yamlx.ErrValue, "%q must be github or gitlab", f.Type)
				}
			case "api_url":
				s, err := yamlx.String(p.file, ff, v)
				if err != nil {
					return nil, err
				}
				if f.APIURL, err = ref.Canonicalize(s); err != nil {
					return nil, yamlx.Wrap(p.file, v, ff, err)
				}
				if strings.Contains(f.APIURL, "?") {
					return nil, yamlx.Errorf(p.file, v, ff, yamlx.ErrValue, "an API URL has no query")
				}
				f.APIURL = strings.TrimSuffix(f.APIURL, "/")
			case "token_env":
				if f.TokenEnv, err = yamlx.String(p.file, ff, v); err != nil {
					return nil, err
				}
				if !ValidEnvName(f.TokenEnv) {
					return nil, yamlx.Errorf(p.file, v, ff, yamlx.ErrValue, "%q is not an environment variable name", f.TokenEnv)
				}
			default:
				return nil, yamlx.Errorf(p.file, k, ff, yamlx.ErrUnknownField, "")
			}
		}
		if f.Host == "" {
			return nil, yamlx.Errorf(p.file, item, field+".host", yamlx.ErrValue, "required")
		}
		if f.Type == "" {
			return nil, yamlx.Errorf(p.file, item, field+".type", yamlx.ErrValue, "required (github or gitlab)")
		}
		if f.APIURL == "" {
			f.APIURL = defaultAPIURL(f)
		}
		for _, prev := range out {
			if prev.Host == f.Host {
				return nil, yamlx.Errorf(p.file, item, field+".host", yamlx.ErrDuplicate, "%s is configured twice", f.Host)
			}
		}
		out = append(out, f)
	}
	// The defaults stay available unless the file configures the same host.
	for _, d := range DefaultForges() {
		if !slices.ContainsFunc(out, func(f Forge) bool { return f.Host == d.Host }) {
			out = append(out, d)
		}
	}
	return out, nil
}

func defaultAPIURL(f Forge) string {
	switch {
	case f.Type == "github" && f.Host == "github.com":
		return "https://api.github.com"
	case f.Type == "github":
		return "https://" + f.Host + "/api/v3"
	default:
		return "https://" + f.Host + "/api/v4"
	}
}
