package config

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/netguard"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
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
	Secrets                []Secret // secrets: (secrets.go; org only)
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
	// IdleTimeout is sandbox.idle_timeout: `fullsend chat` suspends its
	// sandbox (snapshot, teardown) after this long without a turn.
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is sandbox.idle_timeout when config.yaml sets none.
const DefaultIdleTimeout = 15 * time.Minute

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
	// AllowDisable (security.allow_disable, org only) lets a harness set
	// security.enabled: false.
	AllowDisable    bool
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
		Sandbox: Sandbox{Backend: sandbox.DefaultBackend, Limits: DefaultLimits(), IdleTimeout: DefaultIdleTimeout},
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
	data, err := yamlx.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return Default(), nil, nil
	}
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

// parser is the context of one Parse: the configuration being filled and
// the notices so far. The *YAML types below are the schema of the file;
// their CheckKey hooks check each key as it is decoded (in the order of the
// file) and store it into the configuration.
type parser struct {
	file    string
	c       *Config
	forges  []Forge // forges: entries so far
	notices []string
}

func (p *parser) warn(n *yaml.Node, field, msg string) {
	p.notices = append(p.notices, fmt.Sprintf("%s:%d: %s: %s", p.file, n.Line, field, msg))
}

func ctx(f *yamlx.Fields) *parser { return f.Ctx.(*parser) }

// The hooks of the schema (a hook with a wrong signature would silently
// not be called).
var (
	_ yamlx.KeyChecker   = (*configYAML)(nil)
	_ yamlx.UnknownKeyer = (*configYAML)(nil)
	_ yamlx.UnknownKeyer = (*agentYAML)(nil)
	_ yamlx.KeyChecker   = (*sandboxYAML)(nil)
	_ yamlx.UnknownKeyer = (*sandboxYAML)(nil)
	_ yamlx.KeyChecker   = (*kubernetesYAML)(nil)
	_ yamlx.UnknownKeyer = (*kubernetesYAML)(nil)
	_ yamlx.KeyChecker   = (*securityYAML)(nil)
	_ yamlx.KeyChecker   = (*remoteYAML)(nil)
	_ yamlx.KeyChecker   = (*scanPolicyYAML)(nil)
	_ yamlx.KeyChecker   = (*llmGuardYAML)(nil)
	_ yamlx.KeyChecker   = (*forgeYAML)(nil)
	_ yamlx.UnknownKeyer = (*runtimesYAML)(nil)
	_ yamlx.KeyChecker   = (*claudeYAML)(nil)
	_ yamlx.UnknownKeyer = (*claudeYAML)(nil)
	_ yamlx.UnknownKeyer = (*cacheYAML)(nil)
	_ yamlx.KeyChecker   = (*cacheOCIYAML)(nil)
	_ yamlx.UnknownKeyer = (*cacheOCIYAML)(nil)
)

// Parse decodes and validates a config file. name is used in messages.
func Parse(name string, data []byte) (*Config, []string, error) {
	p := &parser{file: name, c: Default()}
	p.c.Path = name
	root, err := yamlx.Parse(name, data)
	if err != nil {
		return nil, nil, err
	}
	if err := yamlx.Decode(name, "", root, &configYAML{}, p); err != nil {
		return nil, nil, err
	}
	return p.c, p.notices, nil
}

type configYAML struct {
	Version                string       `yaml:"version"`
	Runtime                string       `yaml:"runtime"`
	Agents                 *yaml.Node   `yaml:"agents"` // a source, or a mapping with source:
	AllowedRemoteResources []string     `yaml:"allowed_remote_resources"`
	Sandbox                sandboxYAML  `yaml:"sandbox"`
	Security               securityYAML `yaml:"security"`
	Forges                 []forgeYAML  `yaml:"forges"`
	Runtimes               runtimesYAML `yaml:"runtimes"`
	Cache                  cacheYAML    `yaml:"cache"`
	Secrets                []secretYAML `yaml:"secrets"`
}

func (w *configYAML) CheckKey(f *yamlx.Fields, key string) error {
	p, c := ctx(f), ctx(f).c
	var err error
	switch key {
	case "version":
		if w.Version != "1" {
			return f.Errorf(key, yamlx.ErrValue, "unsupported version %q (want \"1\")", w.Version)
		}
		c.Version = w.Version
	case "runtime":
		if !validName(w.Runtime) {
			return f.Errorf(key, yamlx.ErrValue, "%q is not a runtime name", w.Runtime)
		}
		c.Runtime = w.Runtime
	case "agents":
		c.Agents, err = p.agents(f.Value(key))
	case "allowed_remote_resources":
		c.AllowedRemoteResources, err = prefixes(f, key, w.AllowedRemoteResources)
	case "forges":
		// The defaults stay available unless the file configures the same host.
		c.Forges = p.forges
		for _, d := range DefaultForges() {
			if !slices.ContainsFunc(c.Forges, func(f Forge) bool { return f.Host == d.Host }) {
				c.Forges = append(c.Forges, d)
			}
		}
	}
	return err
}

func (w *configYAML) UnknownKey(f *yamlx.Fields, e yamlx.Entry) error {
	if ignoredKeys[e.Key.Value] {
		ctx(f).warn(e.Key, e.Key.Value, "belongs to fullsend features outside the runner; ignored")
	} else if s := yamlx.Suggest(e.Key.Value, f.Known()); s != "" {
		ctx(f).warn(e.Key, e.Key.Value, "unknown key; ignored (did you mean "+s+"?)")
	} else {
		ctx(f).warn(e.Key, e.Key.Value, "unknown key; ignored")
	}
	return nil
}

func validName(s string) bool {
	return ValidChars(s, 0, func(_ int, ch byte) bool {
		return ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_'
	})
}

// ValidEnvName reports whether s is a POSIX environment variable name.
func ValidEnvName(s string) bool {
	return ValidChars(s, 0, func(i int, ch byte) bool {
		return ch >= 'A' && ch <= 'Z' || ch >= 'a' && ch <= 'z' || ch == '_' || i > 0 && ch >= '0' && ch <= '9'
	})
}

// ValidChars reports whether the name s is non-empty, at most maxLen bytes
// long (maxLen 0: no bound) and made only of bytes ok accepts (ch at index i):
// the shape of every name rule of config files and harnesses.
func ValidChars(s string, maxLen int, ok func(i int, ch byte) bool) bool {
	if s == "" || maxLen > 0 && len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(i, s[i]) {
			return false
		}
	}
	return true
}

// elem returns the node and field path of element i of the list under key.
func elem(f *yamlx.Fields, key string, i int) (*yaml.Node, string) {
	return f.Value(key).Content[i], fmt.Sprintf("%s[%d]", f.Field(key), i)
}

// prefixes canonicalises the allowlist prefixes list of key.
func prefixes(f *yamlx.Fields, key string, list []string) ([]string, error) {
	out := make([]string, 0, len(list))
	for i, s := range list {
		c, err := ref.CanonicalPrefix(s)
		if err != nil {
			n, field := elem(f, key, i)
			return nil, yamlx.Wrap(f.File, n, field, err)
		}
		out = append(out, c)
	}
	return out, nil
}

type agentYAML struct {
	Source string `yaml:"source"`
}

func (a *agentYAML) UnknownKey(f *yamlx.Fields, e yamlx.Entry) error {
	ctx(f).warn(e.Key, f.Field(e.Key.Value), "unknown key; ignored")
	return nil
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
		var a agentYAML
		if err := yamlx.Decode(p.file, field, item, &a, p); err != nil {
			return nil, err
		}
		if a.Source == "" {
			return nil, yamlx.Errorf(p.file, item, field+".source", yamlx.ErrValue, "required")
		}
		if _, err := ref.Classify(a.Source); err != nil {
			return nil, yamlx.Wrap(p.file, item, field+".source", err)
		}
		out = append(out, Agent(a))
	}
	return out, nil
}

type sandboxYAML struct {
	Backend      string         `yaml:"backend"`
	Kubernetes   kubernetesYAML `yaml:"kubernetes"`
	Docker       dockerYAML     `yaml:"docker"`
	HostServices []string       `yaml:"host_services"`
	Limits       *yaml.Node     `yaml:"limits"`
	IdleTimeout  string         `yaml:"idle_timeout"`
}

type dockerYAML struct {
	Host       string `yaml:"host"`
	OCIRuntime string `yaml:"oci_runtime"`
	Image      string `yaml:"image"`
}

func (s *sandboxYAML) CheckKey(f *yamlx.Fields, key string) error {
	c := &ctx(f).c.Sandbox
	var err error
	switch key {
	case "backend":
		if !sandbox.IsBackend(s.Backend) {
			return f.Errorf(key, yamlx.ErrValue, "%q is not a backend (%s)", s.Backend, strings.Join(sandbox.BackendNames(), ", "))
		}
		c.Backend = s.Backend
	case "kubernetes":
		c.Kubernetes = Kubernetes(s.Kubernetes)
	case "docker":
		c.Docker = Docker(s.Docker)
	case "host_services":
		c.HostServices, err = hostServices(f, key, s.HostServices)
	case "limits":
		err = ParseLimits(f.File, f.Field(key), s.Limits, &c.Limits, nil)
	case "idle_timeout":
		d, perr := time.ParseDuration(s.IdleTimeout)
		if perr != nil || d < time.Second {
			return f.Errorf(key, yamlx.ErrValue, "%q is not a duration of at least 1s (e.g. 15m)", s.IdleTimeout)
		}
		c.IdleTimeout = d
	}
	return err
}

func (s *sandboxYAML) UnknownKey(f *yamlx.Fields, e yamlx.Entry) error {
	ctx(f).warn(e.Key, f.Field(e.Key.Value), "unknown key; ignored")
	return nil
}

type securityYAML struct {
	FailMode        string       `yaml:"fail_mode"`
	AllowedEnvNames []string     `yaml:"allowed_env_names"`
	AllowDisable    bool         `yaml:"allow_disable"`
	RemoteResources remoteYAML   `yaml:"remote_resources"`
	Scan            scanYAML     `yaml:"scan"`
	LLMGuard        llmGuardYAML `yaml:"llm_guard"`
}

func (s *securityYAML) CheckKey(f *yamlx.Fields, key string) error {
	c := &ctx(f).c.Security
	switch key {
	case "fail_mode":
		if s.FailMode != FailClosed && s.FailMode != FailOpen {
			return f.Errorf(key, yamlx.ErrValue, "%q must be closed or open", s.FailMode)
		}
		c.FailMode = s.FailMode
	case "allowed_env_names":
		for i, name := range s.AllowedEnvNames {
			if !ValidEnvName(name) {
				n, field := elem(f, key, i)
				return yamlx.Errorf(f.File, n, field, yamlx.ErrValue, "%q is not an environment variable name", name)
			}
		}
		c.AllowedEnvNames = s.AllowedEnvNames
	case "allow_disable":
		c.AllowDisable = s.AllowDisable
	}
	return nil
}

type remoteYAML struct {
	AllowedDomains         []string      `yaml:"allowed_domains"`
	AllowedPrivateNetworks []string      `yaml:"allowed_private_networks"`
	TrustedHarnessPrefixes []string      `yaml:"trusted_harness_prefixes"`
	Timeout                time.Duration `yaml:"timeout"`
	MaxSizeBytes           int64         `yaml:"max_size_bytes"`
	MaxDepth               int64         `yaml:"max_depth"`
	MaxResources           int64         `yaml:"max_resources"`
}

func (w *remoteYAML) CheckKey(f *yamlx.Fields, key string) error {
	r := &ctx(f).c.Security.RemoteResources
	var err error
	switch key {
	case "allowed_domains":
		r.AllowedDomains = make([]string, 0, len(w.AllowedDomains))
		for i, d := range w.AllowedDomains {
			if err := netguard.CheckHostPattern(d); err != nil {
				n, field := elem(f, key, i)
				return yamlx.Wrap(f.File, n, field, err)
			}
			r.AllowedDomains = append(r.AllowedDomains, strings.TrimSuffix(strings.ToLower(d), "."))
		}
	case "allowed_private_networks":
		r.AllowedPrivateNetworks = nil
		for i, s := range w.AllowedPrivateNetworks {
			pf, err := netip.ParsePrefix(s)
			if err != nil {
				n, field := elem(f, key, i)
				return yamlx.Errorf(f.File, n, field, yamlx.ErrValue, "%q is not a CIDR like 10.0.0.0/8", s)
			}
			r.AllowedPrivateNetworks = append(r.AllowedPrivateNetworks, pf.Masked())
		}
	case "trusted_harness_prefixes":
		r.TrustedHarnessPrefixes, err = prefixes(f, key, w.TrustedHarnessPrefixes)
	case "timeout":
		if w.Timeout <= 0 {
			return f.Errorf(key, yamlx.ErrValue, "must be positive")
		}
		r.Timeout = w.Timeout
	case "max_size_bytes":
		r.MaxSizeBytes, err = positive(f, key, w.MaxSizeBytes)
	case "max_depth":
		x, perr := positive(f, key, w.MaxDepth)
		r.MaxDepth, err = int(x), perr
	case "max_resources":
		x, perr := positive(f, key, w.MaxResources)
		r.MaxResources, err = int(x), perr
	}
	return err
}

// positive bounds the remote_resources limits.
func positive(f *yamlx.Fields, key string, x int64) (int64, error) {
	if x <= 0 || x > 1<<40 {
		return 0, f.Errorf(key, yamlx.ErrValue, "must be a positive integer")
	}
	return x, nil
}

type scanYAML struct {
	Local  scanPolicyYAML `yaml:"local"`
	Remote scanPolicyYAML `yaml:"remote"`
}

type scanPolicyYAML struct {
	ContextInjection bool    `yaml:"context_injection"`
	MLThreshold      float64 `yaml:"ml_threshold"`
}

func (w *scanPolicyYAML) CheckKey(f *yamlx.Fields, key string) error {
	s := &ctx(f).c.Security.Scan
	pol, remote := &s.Local, strings.HasSuffix(f.Path, ".remote")
	if remote {
		pol = &s.Remote
	}
	switch key {
	case "context_injection":
		if !w.ContextInjection && remote {
			return f.Errorf(key, yamlx.ErrValue, "the context-injection scan cannot be turned off for remote resources")
		}
		b := w.ContextInjection
		pol.ContextInjection = &b
	case "ml_threshold":
		if !(w.MLThreshold > 0 && w.MLThreshold <= 1) {
			return f.Errorf(key, yamlx.ErrValue, "must be in (0, 1]")
		}
		pol.MLThreshold = w.MLThreshold
	}
	return nil
}

type llmGuardYAML struct {
	URL      string        `yaml:"url"`
	TokenEnv string        `yaml:"token_env"`
	Timeout  time.Duration `yaml:"timeout"`
}

func (w *llmGuardYAML) CheckKey(f *yamlx.Fields, key string) error {
	g := &ctx(f).c.Security.LLMGuard
	switch key {
	case "url":
		u, err := checkServiceURL(w.URL)
		if err != nil {
			return f.Wrap(key, err)
		}
		g.URL = u
	case "token_env":
		if !ValidEnvName(w.TokenEnv) {
			return f.Errorf(key, yamlx.ErrValue, "%q is not an environment variable name", w.TokenEnv)
		}
		g.TokenEnv = w.TokenEnv
	case "timeout":
		if w.Timeout <= 0 {
			return f.Errorf(key, yamlx.ErrValue, "must be positive")
		}
		g.Timeout = w.Timeout
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

// forgeYAML is one forges: entry; its hook checks each key and, at the end
// of the entry, stores it in the parser's list.
type forgeYAML struct {
	Host     string `yaml:"host"`
	Type     string `yaml:"type"`
	APIURL   string `yaml:"api_url"`
	TokenEnv string `yaml:"token_env"`
}

func (w *forgeYAML) CheckKey(f *yamlx.Fields, key string) error {
	switch key {
	case "host":
		c, err := ref.Canonicalize("https://" + w.Host + "/")
		if err != nil || strings.ContainsAny(w.Host, "/?#@") || c == "" {
			return f.Errorf(key, yamlx.ErrValue, "%q is not a host[:port]", w.Host)
		}
		w.Host = strings.TrimSuffix(strings.TrimPrefix(c, "https://"), "/")
	case "type":
		if w.Type != "github" && w.Type != "gitlab" {
			return f.Errorf(key, yamlx.ErrValue, "%q must be github or gitlab", w.Type)
		}
	case "api_url":
		u, err := ref.Canonicalize(w.APIURL)
		if err != nil {
			return f.Wrap(key, err)
		}
		if strings.Contains(u, "?") {
			return f.Errorf(key, yamlx.ErrValue, "an API URL has no query")
		}
		w.APIURL = strings.TrimSuffix(u, "/")
	case "token_env":
		if !ValidEnvName(w.TokenEnv) {
			return f.Errorf(key, yamlx.ErrValue, "%q is not an environment variable name", w.TokenEnv)
		}
	case "":
		return w.add(f)
	}
	return nil
}

// add checks a complete forges: entry and appends it.
func (w *forgeYAML) add(f *yamlx.Fields) error {
	p := ctx(f)
	fg := Forge(*w)
	if fg.Host == "" {
		return yamlx.Errorf(f.File, f.Node, f.Path+".host", yamlx.ErrValue, "required")
	}
	if fg.Type == "" {
		return yamlx.Errorf(f.File, f.Node, f.Path+".type", yamlx.ErrValue, "required (github or gitlab)")
	}
	if fg.APIURL == "" {
		fg.APIURL = defaultAPIURL(fg)
	}
	for _, prev := range p.forges {
		if prev.Host == fg.Host {
			return yamlx.Errorf(f.File, f.Node, f.Path+".host", yamlx.ErrDuplicate, "%s is configured twice", fg.Host)
		}
	}
	p.forges = append(p.forges, fg)
	return nil
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
