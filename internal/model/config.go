package model

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// API is a wire dialect.
type API string

const (
	APIOpenAI    API = "openai"    // chat completions with function tools
	APIAnthropic API = "anthropic" // Messages API
)

// AuthMode says how the key is sent.
type AuthMode string

const (
	// AuthBearer sends the key: "Authorization: Bearer KEY" (openai) or
	// "x-api-key: KEY" (anthropic).
	AuthBearer AuthMode = "bearer"
	// AuthNone sends no credential (local servers, authenticating gateways).
	AuthNone AuthMode = "none"
)

// Environment variables read by ConfigFromEnv.
const (
	EnvAPI     = "FULLSEND_MODEL_API"      // openai | anthropic
	EnvBaseURL = "FULLSEND_MODEL_BASE_URL" // e.g. http://localhost:8080/v1
	EnvModel   = "FULLSEND_MODEL"          // model name sent to the server
	EnvAuth    = "FULLSEND_MODEL_AUTH"     // bearer | none
	EnvKeyEnv  = "FULLSEND_MODEL_KEY_ENV"  // name of the variable holding the key
	EnvAPIKey  = "FULLSEND_API_KEY"        // default key variable
)

// Default base URLs when none is configured.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
)

// Secret holds an API key. It never formats as its value (fmt, %v, %s, %q,
// %x, %#v, JSON all print "[redacted]"); Reveal returns it.
type Secret string

const redacted = "[redacted]"

func (Secret) String() string               { return redacted }
func (Secret) GoString() string             { return redacted }
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
func (s Secret) Reveal() string             { return string(s) }
func (s Secret) redact(text string) string  { return Redact(text, string(s)) }

// Redact replaces every occurrence of secret in text with "[redacted]".
// Secrets shorter than 4 bytes are not searched for (they would match
// ordinary text); such keys are refused by Config.Validate anyway.
func Redact(text, secret string) string {
	if len(secret) < 4 {
		return text
	}
	return strings.ReplaceAll(text, secret, redacted)
}

// Config selects the endpoint, model and credential of a client.
type Config struct {
	API     API      `json:"api"`
	BaseURL string   `json:"base_url"`
	Model   string   `json:"model"`
	Auth    AuthMode `json:"auth"`
	// KeyEnv names the host environment variable the key was read from.
	KeyEnv string `json:"key_env,omitempty"`
	// Key is the credential (empty with AuthNone).
	Key Secret `json:"-"`
	// Origin records where each field came from ("flag", "env", "harness",
	// "default"), keyed by field name (api, base_url, model, auth, key_env).
	Origin map[string]string `json:"origin,omitempty"`
}

// Overrides are command-line values (highest precedence) plus the harness
// `model` field (lowest precedence before defaults). Empty = unset.
type Overrides struct {
	API, BaseURL, Model, Auth, KeyEnv string
	// HarnessModel is the harness's `model` field (e.g. "opus"); used only
	// when neither a flag nor FULLSEND_MODEL names a model.
	HarnessModel string
}

// ConfigFromEnv builds and validates a Config: flags (o) > environment
// (getenv) > o.HarnessModel > defaults. The key is read from the variable
// named by KeyEnv (default FULLSEND_API_KEY) when Auth is bearer.
func ConfigFromEnv(getenv func(string) string, o Overrides) (Config, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	c := Config{Origin: map[string]string{}}
	pick := func(field, flag, env, def string) string {
		if v := strings.TrimSpace(flag); v != "" {
			c.Origin[field] = "flag"
			return v
		}
		if env != "" {
			if v := strings.TrimSpace(getenv(env)); v != "" {
				c.Origin[field] = "env"
				return v
			}
		}
		if def != "" {
			c.Origin[field] = "default"
		}
		return def
	}
	c.API = API(strings.ToLower(pick("api", o.API, EnvAPI, string(APIOpenAI))))
	def := DefaultOpenAIBaseURL
	if c.API == APIAnthropic {
		def = DefaultAnthropicBaseURL
	}
	c.BaseURL = pick("base_url", o.BaseURL, EnvBaseURL, def)
	c.Model = pick("model", o.Model, EnvModel, "")
	if c.Model == "" && strings.TrimSpace(o.HarnessModel) != "" {
		c.Model = strings.TrimSpace(o.HarnessModel)
		c.Origin["model"] = "harness"
	}
	c.Auth = AuthMode(strings.ToLower(pick("auth", o.Auth, EnvAuth, string(AuthBearer))))
	if c.Auth == AuthBearer {
		c.KeyEnv = pick("key_env", o.KeyEnv, EnvKeyEnv, EnvAPIKey)
		c.Key = Secret(strings.TrimSpace(getenv(c.KeyEnv)))
	} else if c.Auth == AuthNone {
		// A key left set with auth none is refused by Validate, never
		// ignored: the user may believe it is being sent.
		name := strings.TrimSpace(o.KeyEnv)
		if name == "" {
			name = strings.TrimSpace(getenv(EnvKeyEnv))
		}
		if name == "" {
			name = EnvAPIKey
		}
		if k := strings.TrimSpace(getenv(name)); k != "" {
			c.KeyEnv, c.Key = name, Secret(k)
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// ConfigError reports an unusable model configuration.
type ConfigError struct {
	Field string
	Err   error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("model config %s: %v", e.Field, e.Err) }
func (e *ConfigError) Unwrap() error { return e.Err }

// Validate checks the dialect, base URL, model and credential rules listed in
// the package documentation.
func (c Config) Validate() error {
	switch c.API {
	case APIOpenAI, APIAnthropic:
	default:
		return &ConfigError{"api", fmt.Errorf("%q is not openai or anthropic (set %s or --model-api)", c.API, EnvAPI)}
	}
	if c.Model == "" {
		return &ConfigError{"model", fmt.Errorf("no model named (set %s, --model, or the harness model field)", EnvModel)}
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return &ConfigError{"base_url", fmt.Errorf("%q is not an http(s) URL with a host", c.BaseURL)}
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return &ConfigError{"base_url", fmt.Errorf("%q must not carry userinfo, a query or a fragment", u.Redacted())}
	}
	switch c.Auth {
	case AuthNone:
		if c.Key != "" {
			return &ConfigError{"auth", fmt.Errorf("%s=none but %s holds a key: unset one of them (a credential is never ignored silently)", EnvAuth, c.KeyEnv)}
		}
	case AuthBearer:
		if c.Key == "" {
			name := c.KeyEnv
			if name == "" {
				name = EnvAPIKey
			}
			return &ConfigError{"auth", fmt.Errorf("bearer auth needs a key in %s (or set %s=none for servers without auth)", name, EnvAuth)}
		}
		if len(c.Key) < 4 {
			return &ConfigError{"auth", fmt.Errorf("key in %s is too short to be a credential", c.KeyEnv)}
		}
		if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
			return &ConfigError{"base_url", fmt.Errorf("%s: refusing to send a key over plain http to a non-loopback host", u.Redacted())}
		}
	default:
		return &ConfigError{"auth", fmt.Errorf("%q is not bearer or none", c.Auth)}
	}
	return nil
}

// Endpoint is the URL requests are posted to.
func (c Config) Endpoint() string {
	base := strings.TrimRight(c.BaseURL, "/")
	if c.API == APIAnthropic {
		return base + "/v1/messages"
	}
	return base + "/chat/completions"
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(strings.TrimSuffix(h, "."), "localhost") {
		return true
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().IsLoopback()
	}
	return net.ParseIP(h) != nil && net.ParseIP(h).IsLoopback()
}
