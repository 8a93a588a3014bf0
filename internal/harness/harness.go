package harness

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// Limits.
const (
	MaxBaseChain             = 5  // at most this many base: hops above a harness
	DefaultMaxRuntimeFetches = 10 // when allow_runtime_fetch is true and max_runtime_fetches unset
)

// Harness is one harness after decoding (and, after Load, after base
// composition). String fields hold references as written; use Refs to list
// them and Resolve to map a local one to a file.
type Harness struct {
	Base      string
	Agent     string
	Doc       string
	Model     string
	Image     string
	Runtime   string
	Policy    string
	Openshell Openshell
	Providers []string // provider files (paths or URLs)
	// ProviderNames are bare provider names (no "/", no .yaml/.yml): names
	// of OpenShell providers, not files; never resolved.
	ProviderNames  []string
	Role           string
	Slug           string
	ReadonlyRepo   bool
	HostFiles      []HostFileSpec
	PreScript      string
	PostScript     string
	Skills         []string
	Plugins        []string
	ValidationLoop *ValidationLoop
	Env            Env
	TimeoutMinutes int
	// SandboxTimeoutSeconds bounds provisioning the sandbox (upstream's
	// sandbox ready timeout): 0 (default) or 30-600.
	SandboxTimeoutSeconds int
	// Effort is the reasoning effort of the claude runtime (--effort).
	Effort string
	// Resources lowers the org's sandbox.limits for this harness (a zero
	// field is not set; a raise is a validation error).
	Resources config.Limits

	AllowedRemoteResources []string // canonical prefixes; after Load, the union of the base chain
	AllowRuntimeFetch      bool
	MaxRuntimeFetches      int // 0 = unset (DefaultMaxRuntimeFetches applies)

	Security Security

	// Forge holds the forge.<name> overlays not yet applied.
	Forge map[string]*Harness
	// AppliedForge names the overlay ApplyForge merged in ("" = none).
	AppliedForge string

	// File is the file (or URL) the harness was read from; Chain lists the
	// files of its base: chain, child first, when loaded with Load.
	File  string
	Chain []string
	// Root and Layers are where local references resolve (see LoadOptions).
	Root   string
	Layers []string
	// Notices are one-line messages for the user (e.g. a security setting
	// of a child that was overridden by its stricter base).
	Notices []string

	set     map[string]bool // scalar fields present in the file
	origins map[string]Pos  // where each value was written
}

// Openshell holds OpenShell settings.
type Openshell struct {
	Profiles []string
}

// HostFileSpec is a file copied from the runner host into the sandbox.
type HostFileSpec struct {
	Src      string
	Dest     string
	Expand   bool
	Optional bool
}

// ValidationLoop validates the agent's result.
type ValidationLoop struct {
	Script        string
	Schema        string
	MaxIterations int
	// PreflightCheck is a shell command run on the runner host before the
	// sandbox is provisioned (host dependencies of the validation); a
	// non-zero exit fails the run. Local harnesses only.
	PreflightCheck string
}

// Env holds environment variables for runner scripts and the sandbox.
type Env struct {
	Runner  map[string]string
	Sandbox map[string]string
}

// Security holds the harness security overrides. A nil pointer / empty
// string means "not set".
type Security struct {
	FailMode         string          // "closed" | "open" | ""
	HostScanners     *bool           // host-side context scanners (false when the map form turns any off)
	SandboxHooks     map[string]bool // sandbox hook name -> enabled
	ContextInjection *bool           // local context-injection scan
}

// ErrRemotePreflight: remote content may not set
// validation_loop.preflight_check, a command the runner host would run.
var ErrRemotePreflight = errors.New("validation_loop.preflight_check is not allowed in remote content: it is a command run on the runner host (declare it in a local harness)")

// KnownSandboxHooks are the hook names security.sandbox_hooks accepts.
var KnownSandboxHooks = []string{"canary", "context_suppress", "secret_redact", "ssrf", "tirith", "tool_allowlist", "unicode"}

// Pos is where a value was written.
type Pos struct {
	File string
	Line int
}

func (h *Harness) mark(field string, n *yaml.Node) {
	if h.set == nil {
		h.set = map[string]bool{}
	}
	h.set[field] = true
	h.origin(field, n)
}

func (h *Harness) origin(key string, n *yaml.Node) {
	if h.origins == nil {
		h.origins = map[string]Pos{}
	}
	if n != nil {
		h.origins[key] = Pos{File: h.File, Line: n.Line}
	}
}

// IsSet reports whether a scalar field (YAML name, e.g. "readonly_repo" or
// "validation_loop.max_iterations") was written in the harness or its chain.
func (h *Harness) IsSet(field string) bool { return h.set[field] }

// Pos returns where value was written for field (a YAML name such as
// "skills" or "forge.github.policy"); zero when unknown.
func (h *Harness) Pos(field, value string) Pos {
	if p, ok := h.origins[field+"\x00"+value]; ok {
		return p
	}
	if p, ok := h.origins[field]; ok {
		return p
	}
	return Pos{File: h.File}
}

// EffectiveMaxRuntimeFetches is max_runtime_fetches, or its default.
func (h *Harness) EffectiveMaxRuntimeFetches() int {
	if h.MaxRuntimeFetches > 0 {
		return h.MaxRuntimeFetches
	}
	return DefaultMaxRuntimeFetches
}

// ForgeNames lists the forge overlays, sorted.
func (h *Harness) ForgeNames() []string {
	return slices.Sorted(maps.Keys(h.Forge))
}

// Parse decodes one harness file strictly: an unknown field is an error
// naming file, line and field. It does not follow base: (see Load) and does
// not validate references (see Validate).
func Parse(name string, data []byte) (*Harness, error) {
	root, err := yamlx.Parse(name, data)
	if err != nil {
		return nil, err
	}
	h := &Harness{File: name}
	if root == nil {
		return h, nil
	}
	d := decoder{file: name}
	if err := d.fields(root, "", h, false); err != nil {
		return nil, err
	}
	return h, nil
}

type decoder struct{ file string }

func (d decoder) errf(n *yaml.Node, field string, sentinel error, format string, args ...any) error {
	return yamlx.Errorf(d.file, n, field, sentinel, format, args...)
}

// fields decodes a harness mapping (overlay: a forge.<name> mapping, which
// may not hold base, forge or allowed_remote_resources-related fields).
func (d decoder) fields(n *yaml.Node, path string, h *Harness, overlay bool) error {
	pairs, err := yamlx.Pairs(d.file, path, n)
	if err != nil {
		return err
	}
	f := d.file
	for _, kv := range pairs {
		k, v := kv[0], kv[1]
		key := k.Value
		field := yamlx.Join(path, key)
		str := func(dst *string) error {
			s, err := yamlx.String(f, field, v)
			if err != nil {
				return err
			}
			*dst = s
			h.mark(field, v)
			return nil
		}
		list := func(dst *[]string) error {
			l, err := yamlx.Strings(f, field, v)
			if err != nil {
				return err
			}
			*dst = l
			h.mark(field, v)
			for i, s := range l {
				h.origin(field+"\x00"+s, v.Content[i])
			}
			return nil
		}
		if overlay {
			switch key {
			case "base", "forge", "allowed_remote_resources", "allow_runtime_fetch", "max_runtime_fetches", "security":
				return d.errf(k, field, yamlx.ErrUnknownField, "not allowed inside a forge overlay")
			}
		}
		switch key {
		case "base":
			err = str(&h.Base)
		case "agent":
			err = str(&h.Agent)
		case "doc":
			err = str(&h.Doc)
		case "model":
			err = str(&h.Model)
		case "image":
			err = str(&h.Image)
		case "runtime":
			err = str(&h.Runtime)
		case "policy":
			err = str(&h.Policy)
		case "role":
			err = str(&h.Role)
		case "slug":
			err = str(&h.Slug)
		case "pre_script":
			err = str(&h.PreScript)
		case "post_script":
			err = str(&h.PostScript)
		case "providers":
			var l []string
			if err = list(&l); err == nil {
				err = d.providers(v, field, h, l)
			}
		case "runner_env":
			err = d.runnerEnv(v, field, h)
		case "sandbox_timeout_seconds":
			var x int64
			if x, err = yamlx.Int(f, field, v); err == nil {
				if x != 0 && (x < 30 || x > 600) {
					return d.errf(v, field, yamlx.ErrValue, "must be 0 (the default) or between 30 and 600")
				}
				h.SandboxTimeoutSeconds = int(x)
				h.mark(field, v)
			}
		case "effort":
			if err = str(&h.Effort); err == nil {
				if cerr := config.CheckEffort(h.Effort); cerr != nil {
					return d.errf(v, field, yamlx.ErrValue, "%v", cerr)
				}
			}
		case "api_servers":
			return d.errf(k, field, yamlx.ErrValue, "not supported: api_servers starts host scripts that the sandbox reaches on host ports, and a harness may not open host endpoints to the sandbox (the org declares them in config.yaml sandbox.host_services and runs them itself)")
		case "skills":
			err = list(&h.Skills)
		case "plugins":
			err = list(&h.Plugins)
		case "allowed_remote_resources":
			err = list(&h.AllowedRemoteResources)
		case "readonly_repo":
			h.ReadonlyRepo, err = yamlx.Bool(f, field, v)
			h.mark(field, v)
		case "allow_runtime_fetch":
			h.AllowRuntimeFetch, err = yamlx.Bool(f, field, v)
			h.mark(field, v)
		case "max_runtime_fetches":
			var x int64
			if x, err = yamlx.Int(f, field, v); err == nil {
				if x < 1 || x > 1000 {
					return d.errf(v, field, yamlx.ErrValue, "must be between 1 and 1000")
				}
				h.MaxRuntimeFetches = int(x)
				h.mark(field, v)
			}
		case "timeout_minutes":
			var x int64
			if x, err = yamlx.Int(f, field, v); err == nil {
				if x < 1 || x > 7*24*60 {
					return d.errf(v, field, yamlx.ErrValue, "must be a positive number of minutes (at most a week)")
				}
				h.TimeoutMinutes = int(x)
				h.mark(field, v)
			}
		case "openshell":
			err = d.openshell(v, field, h)
		case "host_files":
			err = d.hostFiles(v, field, h)
		case "validation_loop":
			err = d.validationLoop(v, field, h)
		case "env":
			err = d.env(v, field, h)
		case "resources":
			err = d.resources(v, field, h)
		case "security":
			err = d.security(v, field, h)
		case "forge":
			err = d.forge(v, field, h)
		default:
			return d.errf(k, field, yamlx.ErrUnknownField, "")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (d decoder) openshell(n *yaml.Node, path string, h *Harness) error {
	pairs, err := yamlx.Pairs(d.file, path, n)
	if err != nil {
		return err
	}
	for _, kv := range pairs {
		field := path + "." + kv[0].Value
		if kv[0].Value != "profiles" {
			return d.errf(kv[0], field, yamlx.ErrUnknownField, "")
		}
		l, err := yamlx.Strings(d.file, field, kv[1])
		if err != nil {
			return err
		}
		h.Openshell.Profiles = l
		h.mark(field, kv[1])
		for i, s := range l {
			h.origin(field+"\x00"+s, kv[1].Content[i])
		}
	}
	return nil
}

func (d decoder) hostFiles(n *yaml.Node, path string, h *Harness) error {
	if yamlx.IsNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return d.errf(n, path, yamlx.ErrType, "expected a list")
	}
	h.HostFiles = nil
	h.mark(path, n)
	for i, item := range n.Content {
		ip := fmt.Sprintf("%s[%d]", path, i)
		pairs, err := yamlx.Pairs(d.file, ip, item)
		if err != nil {
			return err
		}
		var hf HostFileSpec
		srcNode, destNode := item, item
		for _, kv := range pairs {
			field := ip + "." + kv[0].Value
			switch kv[0].Value {
			case "src":
				hf.Src, err = yamlx.String(d.file, field, kv[1])
				srcNode = kv[1]
			case "dest":
				hf.Dest, err = yamlx.String(d.file, field, kv[1])
				destNode = kv[1]
			case "expand":
				hf.Expand, err = yamlx.Bool(d.file, field, kv[1])
			case "optional":
				hf.Optional, err = yamlx.Bool(d.file, field, kv[1])
			default:
				return d.errf(kv[0], field, yamlx.ErrUnknownField, "")
			}
			if err != nil {
				return err
			}
		}
		if hf.Src == "" {
			return d.errf(item, ip+".src", yamlx.ErrValue, "required")
		}
		if hf.Dest == "" {
			return d.errf(item, ip+".dest", yamlx.ErrValue, "required")
		}
		h.origin(path+"\x00"+hf.Src, srcNode)
		h.origin(path+".dest\x00"+hf.Dest, destNode)
		h.HostFiles = append(h.HostFiles, hf)
	}
	return nil
}

func (d decoder) validationLoop(n *yaml.Node, path string, h *Harness) error {
	pairs, err := yamlx.Pairs(d.file, path, n)
	if err != nil {
		return err
	}
	vl := &ValidationLoop{}
	for _, kv := range pairs {
		field := path + "." + kv[0].Value
		switch kv[0].Value {
		case "script":
			vl.Script, err = yamlx.String(d.file, field, kv[1])
		case "schema":
			vl.Schema, err = yamlx.String(d.file, field, kv[1])
		case "max_iterations":
			var x int64
			if x, err = yamlx.Int(d.file, field, kv[1]); err == nil {
				if x < 1 || x > 100 {
					return d.errf(kv[1], field, yamlx.ErrValue, "must be between 1 and 100")
				}
				vl.MaxIterations = int(x)
			}
		case "preflight_check":
			if vl.PreflightCheck, err = yamlx.String(d.file, field, kv[1]); err == nil && strings.ContainsRune(vl.PreflightCheck, 0) {
				return d.errf(kv[1], field, yamlx.ErrValue, "contains NUL")
			}
		default:
			return d.errf(kv[0], field, yamlx.ErrUnknownField, "")
		}
		if err != nil {
			return err
		}
		h.mark(field, kv[1])
	}
	h.mark(path, n)
	h.ValidationLoop = vl
	return nil
}

func (d decoder) env(n *yaml.Node, path string, h *Harness) error {
	pairs, err := yamlx.Pairs(d.file, path, n)
	if err != nil {
		return err
	}
	for _, kv := range pairs {
		field := path + "." + kv[0].Value
		m, err := yamlx.StringMap(d.file, field, kv[1])
		if err != nil {
			return err
		}
		mp, _ := yamlx.Pairs(d.file, field, kv[1])
		for _, e := range mp {
			if !config.ValidEnvName(e[0].Value) {
				return d.errf(e[0], field+"."+e[0].Value, yamlx.ErrValue, "%q is not an environment variable name", e[0].Value)
			}
			h.origin(field+"."+e[0].Value, e[0])
		}
		switch kv[0].Value {
		case "runner":
			for _, e := range mp { // runner_env (its older name) may have come first
				if old, ok := h.Env.Runner[e[0].Value]; ok && old != m[e[0].Value] {
					return d.errf(e[0], field+"."+e[0].Value, yamlx.ErrValue, "also set in runner_env with another value (runner_env is the older name of env.runner)")
				}
			}
			for k, v := range h.Env.Runner {
				if _, ok := m[k]; !ok {
					m[k] = v
				}
			}
			h.Env.Runner = m
		case "sandbox":
			h.Env.Sandbox = m
		default:
			return d.errf(kv[0], field, yamlx.ErrUnknownField, "")
		}
		h.mark(field, kv[1])
	}
	return nil
}

// resources decodes a resources: block (the keys of config's
// sandbox.limits). Each value's origin is recorded under its canonical text
// so that, after merging, a raise is reported where it was written.
func (d decoder) resources(n *yaml.Node, path string, h *Harness) error {
	pairs, err := yamlx.Pairs(d.file, path, n)
	if err != nil {
		return err
	}
	for _, kv := range pairs {
		field := path + "." + kv[0].Value
		if err := config.ParseLimit(d.file, field, kv[0].Value, kv[1], &h.Resources); err != nil {
			if errors.Is(err, yamlx.ErrUnknownField) {
				return d.errf(kv[0], field, yamlx.ErrUnknownField, "(known: %s)", strings.Join(config.LimitKeys, ", "))
			}
			return err
		}
		h.mark(field, kv[1])
		h.origin(field+"\x00"+h.Resources.Value(kv[0].Value), kv[1])
	}
	return nil
}

func (d decoder) security(n *yaml.Node, path string, h *Harness) error {
	pairs, err := yamlx.Pairs(d.file, path, n)
	if err != nil {
		return err
	}
	for _, kv := range pairs {
		k, v := kv[0], kv[1]
		field := path + "." + k.Value
		switch k.Value {
		case "fail_mode":
			s, err := yamlx.String(d.file, field, v)
			if err != nil {
				return err
			}
			if s != "closed" && s != "open" {
				return d.errf(v, field, yamlx.ErrValue, "%q must be closed or open", s)
			}
			h.Security.FailMode = s
		case "host_scanners":
			if v.Kind == yaml.MappingNode {
				if err := d.hostScanners(v, field, h); err != nil {
					return err
				}
				break
			}
			b, err := yamlx.Bool(d.file, field, v)
			if err != nil {
				return err
			}
			h.Security.HostScanners = &b
		case "context_injection":
			b, err := yamlx.Bool(d.file, field, v)
			if err != nil {
				return err
			}
			h.Security.ContextInjection = &b
		case "sandbox_hooks":
			hp, err := yamlx.Pairs(d.file, field, v)
			if err != nil {
				return err
			}
			h.Security.SandboxHooks = map[string]bool{}
			for _, e := range hp {
				ef := field + "." + e[0].Value
				if !slices.Contains(KnownSandboxHooks, e[0].Value) {
					return d.errf(e[0], ef, yamlx.ErrUnknownField, "known hooks: %s", strings.Join(KnownSandboxHooks, ", "))
				}
				b, err := yamlx.Bool(d.file, ef, e[1])
				if err != nil {
					return err
				}
				h.Security.SandboxHooks[e[0].Value] = b
			}
		default:
			return d.errf(k, field, yamlx.ErrUnknownField, "")
		}
		h.mark(field, v)
	}
	return nil
}

// providers splits a providers: list into provider files (paths, URLs)
// and bare provider names (upstream: a name without "/" that does not end
// in .yaml or .yml names a provider, not a file).
func (d decoder) providers(n *yaml.Node, field string, h *Harness, l []string) error {
	h.Providers, h.ProviderNames = nil, nil
	for i, p := range l {
		if strings.Contains(p, "/") || strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") {
			h.Providers = append(h.Providers, p)
			continue
		}
		if !validProviderName(p) {
			return d.errf(n.Content[i], fmt.Sprintf("%s[%d]", field, i), yamlx.ErrValue, "%q is neither a provider file nor a provider name (A-Z a-z 0-9 _ -)", p)
		}
		h.ProviderNames = append(h.ProviderNames, p)
	}
	return nil
}

func validProviderName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// runnerEnv decodes upstream's runner_env: the older name of env.runner,
// with the same meaning and the same rules (names checked, refused in
// remote content): its entries are env.runner entries. A name set both
// here and in env.runner of the same file must have the same value.
func (d decoder) runnerEnv(n *yaml.Node, field string, h *Harness) error {
	m, err := yamlx.StringMap(d.file, field, n)
	if err != nil {
		return err
	}
	mp, _ := yamlx.Pairs(d.file, field, n)
	if h.Env.Runner == nil {
		h.Env.Runner = map[string]string{}
	}
	for _, e := range mp {
		k := e[0].Value
		if !config.ValidEnvName(k) {
			return d.errf(e[0], field+"."+k, yamlx.ErrValue, "%q is not an environment variable name", k)
		}
		if old, ok := h.Env.Runner[k]; ok && old != m[k] {
			return d.errf(e[0], field+"."+k, yamlx.ErrValue, "also set in env.runner with another value (runner_env is the older name of env.runner)")
		}
		h.Env.Runner[k] = m[k]
		h.origin("env.runner."+k, e[0])
	}
	h.mark("env.runner", n)
	return nil
}

// hostScanners decodes upstream's map form of security.host_scanners.
// Host-side scans always run here, so a scanner turned off is recorded as
// HostScanners false (the run notes it is ignored); context_injection is
// security.context_injection. llm_guard settings are checked and ignored.
func (d decoder) hostScanners(n *yaml.Node, field string, h *Harness) error {
	pairs, err := yamlx.Pairs(d.file, field, n)
	if err != nil {
		return err
	}
	on := true
	for _, kv := range pairs {
		k, v := kv[0], kv[1]
		ef := field + "." + k.Value
		switch k.Value {
		case "unicode_normalizer", "ssrf_validator", "secret_redactor", "context_injection":
			b, err := yamlx.Bool(d.file, ef, v)
			if err != nil {
				return err
			}
			if k.Value == "context_injection" {
				h.Security.ContextInjection = &b
				h.mark("security.context_injection", v)
				continue
			}
			on = on && b
		case "llm_guard":
			lp, err := yamlx.Pairs(d.file, ef, v)
			if err != nil {
				return err
			}
			for _, l := range lp {
				lf := ef + "." + l[0].Value
				switch l[0].Value {
				case "enabled":
					_, err = yamlx.Bool(d.file, lf, l[1])
				case "threshold":
					var x float64
					if x, err = yamlx.Float(d.file, lf, l[1]); err == nil && (x < 0 || x > 1) {
						return d.errf(l[1], lf, yamlx.ErrValue, "must be between 0 and 1")
					}
				case "match_type":
					var m string
					if m, err = yamlx.String(d.file, lf, l[1]); err == nil && m != "sentence" && m != "full" {
						return d.errf(l[1], lf, yamlx.ErrValue, "%q must be sentence or full", m)
					}
				default:
					return d.errf(l[0], lf, yamlx.ErrUnknownField, "")
				}
				if err != nil {
					return err
				}
			}
		default:
			return d.errf(k, ef, yamlx.ErrUnknownField, "(known: unicode_normalizer, context_injection, ssrf_validator, secret_redactor, llm_guard)")
		}
	}
	h.Security.HostScanners = &on
	return nil
}

func (d decoder) forge(n *yaml.Node, path string, h *Harness) error {
	pairs, err := yamlx.Pairs(d.file, path, n)
	if err != nil {
		return err
	}
	h.Forge = map[string]*Harness{}
	for _, kv := range pairs {
		name := kv[0].Value
		field := path + "." + name
		if !validForgeName(name) {
			return d.errf(kv[0], field, yamlx.ErrValue, "%q is not a forge name (lower-case letters, digits, - and _)", name)
		}
		o := &Harness{File: d.file}
		if err := d.fields(kv[1], field, o, true); err != nil {
			return err
		}
		o.origins = rekey(o.origins, field+".")
		o.set = rekeySet(o.set, field+".")
		h.Forge[name] = o
		// Keep overlay positions on the parent too, under their full names.
		for k, p := range o.origins {
			if h.origins == nil {
				h.origins = map[string]Pos{}
			}
			h.origins[field+"."+k] = p
		}
	}
	return nil
}

// rekey strips prefix from the keys (overlay fields are decoded with their
// full path; inside the overlay they are plain field names).
func rekey(m map[string]Pos, prefix string) map[string]Pos {
	out := make(map[string]Pos, len(m))
	for k, v := range m {
		out[strings.TrimPrefix(k, prefix)] = v
	}
	return out
}

func rekeySet(m map[string]bool, prefix string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[strings.TrimPrefix(k, prefix)] = v
	}
	return out
}

func validForgeName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// ApplyForge merges the forge.<name> overlay into h (with the base/child
// merge rules, the overlay being the child) and drops the other overlays.
// An unknown name is an error listing the available overlays.
func (h *Harness) ApplyForge(name string) error {
	if h.AppliedForge != "" {
		return fmt.Errorf("harness %s: forge %q already applied", h.File, h.AppliedForge)
	}
	o, ok := h.Forge[name]
	if !ok {
		avail := h.ForgeNames()
		if len(avail) == 0 {
			return fmt.Errorf("harness %s: no forge overlay %q (the harness has no forge: section)", h.File, name)
		}
		return fmt.Errorf("harness %s: no forge overlay %q (available: %s)", h.File, name, strings.Join(avail, ", "))
	}
	origins := map[string]Pos{}
	for k, p := range h.origins {
		if !strings.HasPrefix(k, "forge.") {
			origins[k] = p
		}
	}
	// Overlay positions are recorded under plain names inside o.
	child := *o
	child.origins = o.origins
	base := *h
	base.Forge = nil
	base.origins = origins
	m := Merge(&base, &child)
	m.Forge = nil
	m.AppliedForge = name
	m.File, m.Chain, m.Root, m.Layers = h.File, h.Chain, h.Root, h.Layers
	m.AllowedRemoteResources = h.AllowedRemoteResources
	m.Base = h.Base
	*h = *m
	return nil
}

// sortedKeys returns the keys of m sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
