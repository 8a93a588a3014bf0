package harness

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/event"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/secrets"
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
	// Secrets are the names of org-declared secrets (config.yaml secrets:)
	// the agent needs: the sandbox sees a placeholder for each.
	Secrets []string
	// Resources lowers the org's sandbox.limits for this harness (a zero
	// field is not set; a raise is a validation error).
	Resources config.Limits

	AllowedRemoteResources []string // canonical prefixes; after Load, the union of the base chain
	AllowRuntimeFetch      bool
	MaxRuntimeFetches      int // 0 = unset (DefaultMaxRuntimeFetches applies)

	Security Security

	// Description is a one-line summary of what the harness does (shown by
	// graph and validate).
	Description string
	// SkillOverrides are the file-level overrides of skills entries in
	// object form, in the order written (skill_overrides.go).
	SkillOverrides []SkillOverride
	// Trigger is a CEL bool expression over event (internal/event): the
	// events `fullsend dispatch` runs this harness for ("" = none). It is
	// type-checked at load.
	Trigger string
	// AgentInput is a local directory copied into the sandbox's target
	// directory before the agent runs (at AgentInputDir; an
	// executable-class field: local only, refused in a repository layer).
	AgentInput string

	// Native configures the native runtime (native:): extra tools and
	// delegate_task settings.
	Native Native

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
	// FeedbackMode is what a failed validation feeds back to the agent's
	// next iteration (one of FeedbackModes; "" = the default).
	FeedbackMode string
}

// FeedbackModes are the values of validation_loop.feedback_mode (see
// docs/upstream-schema.md): stdout / stderr feed back only that stream of
// the validation script, exit_code only its exit status, append every
// failed iteration's feedback so far, none nothing (upstream's value).
var FeedbackModes = []string{"stdout", "stderr", "exit_code", "append", "none"}

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
	// TrustRepoSettings (security.trust_repo_settings) lets the target
	// repository's own Claude Code settings start processes (hooks, env,
	// helpers, plugins); refused in remote content.
	TrustRepoSettings *bool
	// Enabled (security.enabled, nil = true): false turns the target
	// repository's context scans advisory and the sandbox hooks off
	// (docs/upstream-schema.md); refused unless config.yaml
	// security.allow_disable is true, in remote content and in a
	// repository layer.
	Enabled *bool
	// OnCritical (security.escalation.on_critical): "" or "halt" stops the
	// run on a blocking context-scan finding (the default); "review" lets
	// it complete and marks it for human review with ReviewLabel.
	OnCritical  string
	ReviewLabel string
	// Trace (security.trace.enabled, nil = true): findings in report.json
	// carry the run's trace id.
	Trace *bool
}

// DefaultReviewLabel is security.escalation.review_label's default
// (upstream's).
const DefaultReviewLabel = "requires-manual-review"

// SecurityEnabled reports security.enabled (default true).
func (s Security) SecurityEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Review reports whether security.escalation.on_critical is review, and
// the label to record.
func (s Security) Review() (bool, string) {
	if s.OnCritical != "review" {
		return false, ""
	}
	if s.ReviewLabel == "" {
		return true, DefaultReviewLabel
	}
	return true, s.ReviewLabel
}

// TraceEnabled reports security.trace.enabled (default true).
func (s Security) TraceEnabled() bool { return s.Trace == nil || *s.Trace }

// ErrSecurityDisabled: security.enabled: false without the org's consent.
var ErrSecurityDisabled = errors.New("false is refused: config.yaml does not set security.allow_disable: true (only the org may let a harness turn security off)")

// ErrRemoteSecurityOff: remote content may not turn security off or
// downgrade a critical finding to a review.
var ErrRemoteSecurityOff = errors.New("not allowed in remote content: it weakens what stops a run on a critical finding (declare it in a local harness)")

// ErrRemotePreflight: remote content may not set
// validation_loop.preflight_check, a command the runner host would run.
var ErrRemotePreflight = errors.New("validation_loop.preflight_check is not allowed in remote content: it is a command run on the runner host (declare it in a local harness)")

// ErrRemoteTrustRepo: remote content may not trust the target
// repository's agent settings (they start processes in the sandbox).
var ErrRemoteTrustRepo = errors.New("security.trust_repo_settings: true is not allowed in remote content: it lets the target repository start processes (declare it in a local harness)")

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
	if err := yamlx.Decode(name, "", root, &harnessYAML{}, h); err != nil {
		return nil, err
	}
	return h, nil
}

// The *YAML types are the schema of a harness file. Decode hands each hook
// the *Harness being filled (Fields.Ctx); the hooks check every key as it
// is decoded, in the order of the file, record where it was written and
// store it. Positions are recorded under the key's full name, so that an
// overlay's are "forge.<name>.<key>" until forge rekeys them.

// commonYAML holds the keys a harness and a forge.<name> overlay share.
type commonYAML struct {
	Agent                 string              `yaml:"agent"`
	Doc                   string              `yaml:"doc"`
	Model                 string              `yaml:"model"`
	Image                 string              `yaml:"image"`
	Runtime               string              `yaml:"runtime"`
	Policy                string              `yaml:"policy"`
	Role                  string              `yaml:"role"`
	Slug                  string              `yaml:"slug"`
	PreScript             string              `yaml:"pre_script"`
	PostScript            string              `yaml:"post_script"`
	Effort                string              `yaml:"effort"`
	Secrets               []string            `yaml:"secrets"`
	Providers             []string            `yaml:"providers"`
	Skills                *yaml.Node          `yaml:"skills"` // skillEntries
	Plugins               []string            `yaml:"plugins"`
	ReadonlyRepo          bool                `yaml:"readonly_repo"`
	TimeoutMinutes        int                 `yaml:"timeout_minutes"`
	SandboxTimeoutSeconds int                 `yaml:"sandbox_timeout_seconds"`
	RunnerEnv             map[string]string   `yaml:"runner_env"`
	Openshell             openshellYAML       `yaml:"openshell"`
	HostFiles             []hostFileYAML      `yaml:"host_files"`
	ValidationLoop        *validationLoopYAML `yaml:"validation_loop"`
	Env                   envYAML             `yaml:"env"`
	Resources             *yaml.Node          `yaml:"resources"` // config.ParseLimits

	skills []string // the references of Skills
}

// harnessYAML is a harness file: the common keys and those an overlay may
// not set.
type harnessYAML struct {
	commonYAML
	Base                   string       `yaml:"base"`
	AllowedRemoteResources []string     `yaml:"allowed_remote_resources"`
	AllowRuntimeFetch      bool         `yaml:"allow_runtime_fetch"`
	MaxRuntimeFetches      int          `yaml:"max_runtime_fetches"`
	Security               securityYAML `yaml:"security"`
	Native                 nativeYAML   `yaml:"native"`
	Forge                  *yaml.Node   `yaml:"forge"` // name -> overlayYAML
	Description            string       `yaml:"description"`
	Trigger                string       `yaml:"trigger"`
	AgentInput             string       `yaml:"agent_input"`
}

// overlayYAML is a forge.<name> overlay.
type overlayYAML struct{ commonYAML }

// overlayRefused are the keys of harnessYAML an overlay may not set.
var overlayRefused = []string{"base", "forge", "allowed_remote_resources", "allow_runtime_fetch", "max_runtime_fetches", "security", "native", "description", "trigger", "agent_input"}

func target(f *yamlx.Fields) *Harness { return f.Ctx.(*Harness) }

// The hooks of the schema (a hook with a wrong signature would silently
// not be called).
var (
	_ yamlx.KeyChecker   = (*harnessYAML)(nil)
	_ yamlx.UnknownKeyer = (*harnessYAML)(nil)
	_ yamlx.KeyChecker   = (*overlayYAML)(nil)
	_ yamlx.UnknownKeyer = (*overlayYAML)(nil)
	_ yamlx.KeyChecker   = (*openshellYAML)(nil)
	_ yamlx.KeyChecker   = (*nativeYAML)(nil)
	_ yamlx.KeyChecker   = (*hostFileYAML)(nil)
	_ yamlx.KeyChecker   = (*validationLoopYAML)(nil)
	_ yamlx.KeyChecker   = (*envYAML)(nil)
	_ yamlx.UnknownKeyer = (*envYAML)(nil)
	_ yamlx.KeyChecker   = (*securityYAML)(nil)
	_ yamlx.KeyChecker   = (*hostScannersYAML)(nil)
	_ yamlx.UnknownKeyer = (*hostScannersYAML)(nil)
	_ yamlx.KeyChecker   = (*llmGuardYAML)(nil)
	_ yamlx.KeyChecker   = (*escalationYAML)(nil)
	_ yamlx.KeyChecker   = (*traceYAML)(nil)
)

func (w *commonYAML) CheckKey(f *yamlx.Fields, key string) error {
	h, field, v := target(f), f.Field(key), f.Value(key)
	switch key {
	case "":
		w.store(h)
	case "providers":
		if err := noEmptyRefs(f, key, w.Providers); err != nil {
			return err
		}
		h.markList(field, v, w.Providers)
		return splitProviders(f, key, w.Providers, h)
	case "skills":
		return w.skillEntries(f, key, h)
	case "plugins":
		h.markList(field, v, w.Plugins)
		return noEmptyRefs(f, key, w.Plugins)
	case "runner_env":
		return runnerEnv(f, key, w.RunnerEnv, h)
	case "secrets":
		for i, name := range w.Secrets {
			if err := secrets.CheckName(name); err != nil {
				return yamlx.Errorf(f.File, v.Content[i], fmt.Sprintf("%s[%d]", field, i), yamlx.ErrValue, "%v", err)
			}
		}
		h.markList(field, v, w.Secrets)
	case "sandbox_timeout_seconds":
		if x := w.SandboxTimeoutSeconds; x != 0 && (x < 30 || x > 600) {
			return f.Errorf(key, yamlx.ErrValue, "must be 0 (the default) or between 30 and 600")
		}
		h.mark(field, v)
	case "effort":
		if err := config.CheckEffort(w.Effort); err != nil {
			return f.Errorf(key, yamlx.ErrValue, "%v", err)
		}
		h.mark(field, v)
	case "timeout_minutes":
		if x := w.TimeoutMinutes; x < 1 || x > 7*24*60 {
			return f.Errorf(key, yamlx.ErrValue, "must be a positive number of minutes (at most a week)")
		}
		h.mark(field, v)
	case "resources":
		// Each value's origin is recorded under its canonical text so
		// that, after merging, a raise is reported where it was written.
		return config.ParseLimits(f.File, field, w.Resources, &h.Resources, func(k string, n *yaml.Node) {
			h.mark(field+"."+k, n)
			h.origin(field+"."+k+"\x00"+config.LimitValue(h.Resources, k), n)
		})
	case "host_files":
		if !yamlx.IsNull(v) {
			h.mark(field, v)
		}
	case "validation_loop":
		h.mark(field, v)
		vl := ValidationLoop(*w.ValidationLoop)
		h.ValidationLoop = &vl
	case "openshell", "env":
		// marked by their own hooks
	default:
		h.mark(field, v)
	}
	return nil
}

func (w *commonYAML) UnknownKey(f *yamlx.Fields, e yamlx.Entry) error {
	field := f.Field(e.Key.Value)
	if e.Key.Value == "api_servers" {
		return yamlx.Errorf(f.File, e.Key, field, yamlx.ErrValue, "not supported: api_servers starts host scripts that the sandbox reaches on host ports, and a harness may not open host endpoints to the sandbox (the org declares them in config.yaml sandbox.host_services and runs them itself)")
	}
	return f.Unknown(e)
}

// store copies the plain values into h (absent keys leave them zero).
func (w *commonYAML) store(h *Harness) {
	h.Agent, h.Doc, h.Model, h.Image, h.Runtime = w.Agent, w.Doc, w.Model, w.Image, w.Runtime
	h.Policy, h.Role, h.Slug, h.PreScript, h.PostScript = w.Policy, w.Role, w.Slug, w.PreScript, w.PostScript
	h.Effort, h.Skills, h.Plugins, h.ReadonlyRepo = w.Effort, w.skills, w.Plugins, w.ReadonlyRepo
	h.TimeoutMinutes, h.SandboxTimeoutSeconds = w.TimeoutMinutes, w.SandboxTimeoutSeconds
	h.Secrets = w.Secrets
}

func (w *harnessYAML) CheckKey(f *yamlx.Fields, key string) error {
	h, field, v := target(f), f.Field(key), f.Value(key)
	switch key {
	case "":
		h.Base, h.AllowedRemoteResources = w.Base, w.AllowedRemoteResources
		h.AllowRuntimeFetch, h.MaxRuntimeFetches = w.AllowRuntimeFetch, w.MaxRuntimeFetches
		h.Description, h.Trigger, h.AgentInput = w.Description, w.Trigger, w.AgentInput
	case "trigger":
		if _, err := event.Compile(w.Trigger); err != nil {
			return f.Errorf(key, yamlx.ErrValue, "CEL: %v", err)
		}
	case "allowed_remote_resources":
		h.markList(field, v, w.AllowedRemoteResources)
		return nil
	case "max_runtime_fetches":
		if x := w.MaxRuntimeFetches; x < 1 || x > 1000 {
			return f.Errorf(key, yamlx.ErrValue, "must be between 1 and 1000")
		}
	case "forge":
		return forge(f, key, h)
	case "security", "native":
		return nil // marked by their own hooks
	}
	return w.commonYAML.CheckKey(f, key)
}

func (w *overlayYAML) UnknownKey(f *yamlx.Fields, e yamlx.Entry) error {
	if slices.Contains(overlayRefused, e.Key.Value) {
		return yamlx.Errorf(f.File, e.Key, f.Field(e.Key.Value), yamlx.ErrUnknownField, "not allowed inside a forge overlay")
	}
	return w.commonYAML.UnknownKey(f, e)
}

// markList marks a list field and records where each of its values was
// written.
func (h *Harness) markList(field string, n *yaml.Node, values []string) {
	h.mark(field, n)
	for i, s := range values {
		h.origin(field+"\x00"+s, n.Content[i])
	}
}

type openshellYAML struct {
	Profiles []string `yaml:"profiles"`
}

func (w *openshellYAML) CheckKey(f *yamlx.Fields, key string) error {
	if key == "profiles" {
		h := target(f)
		h.Openshell.Profiles = w.Profiles
		h.markList(f.Field(key), f.Value(key), w.Profiles)
		return noEmptyRefs(f, key, w.Profiles)
	}
	return nil
}

// noEmptyRefs refuses an empty entry of a list of references (a bare "-"
// in YAML) at its line, instead of listing an empty reference.
func noEmptyRefs(f *yamlx.Fields, key string, values []string) error {
	v := f.Value(key)
	for i, s := range values {
		if s == "" && i < len(v.Content) {
			return yamlx.Errorf(f.File, v.Content[i], fmt.Sprintf("%s[%d]", f.Field(key), i), yamlx.ErrValue, "%v", ref.ErrEmpty)
		}
	}
	return nil
}

type hostFileYAML struct {
	Src      string `yaml:"src"`
	Dest     string `yaml:"dest"`
	Expand   bool   `yaml:"expand"`
	Optional bool   `yaml:"optional"`
}

// CheckKey appends the complete entry to the harness's host files.
func (w *hostFileYAML) CheckKey(f *yamlx.Fields, key string) error {
	if key != "" {
		return nil
	}
	if w.Src == "" {
		return yamlx.Errorf(f.File, f.Node, f.Path+".src", yamlx.ErrValue, "required")
	}
	if w.Dest == "" {
		return yamlx.Errorf(f.File, f.Node, f.Path+".dest", yamlx.ErrValue, "required")
	}
	h := target(f)
	list, _, _ := strings.Cut(f.Path, "[")
	h.origin(list+"\x00"+w.Src, f.Value("src"))
	h.origin(list+".dest\x00"+w.Dest, f.Value("dest"))
	h.HostFiles = append(h.HostFiles, HostFileSpec(*w))
	return nil
}

type validationLoopYAML struct {
	Script         string `yaml:"script"`
	Schema         string `yaml:"schema"`
	MaxIterations  int    `yaml:"max_iterations"`
	PreflightCheck string `yaml:"preflight_check"`
	FeedbackMode   string `yaml:"feedback_mode"`
}

func (w *validationLoopYAML) CheckKey(f *yamlx.Fields, key string) error {
	switch key {
	case "":
		return nil
	case "max_iterations":
		if x := w.MaxIterations; x < 1 || x > 100 {
			return f.Errorf(key, yamlx.ErrValue, "must be between 1 and 100")
		}
	case "preflight_check":
		if strings.ContainsRune(w.PreflightCheck, 0) {
			return f.Errorf(key, yamlx.ErrValue, "contains NUL")
		}
	case "feedback_mode":
		if !slices.Contains(FeedbackModes, w.FeedbackMode) {
			return f.Errorf(key, yamlx.ErrValue, "%q is not a feedback mode (%s)", w.FeedbackMode, strings.Join(FeedbackModes, ", "))
		}
	}
	target(f).mark(f.Field(key), f.Value(key))
	return nil
}

type envYAML struct {
	Runner  map[string]string `yaml:"runner"`
	Sandbox map[string]string `yaml:"sandbox"`
}

func (w *envYAML) CheckKey(f *yamlx.Fields, key string) error {
	if key == "" {
		return nil
	}
	h, field, v := target(f), f.Field(key), f.Value(key)
	if err := envNames(f, key, h); err != nil {
		return err
	}
	if key == "sandbox" {
		h.Env.Sandbox = w.Sandbox
		h.mark(field, v)
		return nil
	}
	m := w.Runner
	if m == nil && len(h.Env.Runner) > 0 {
		m = map[string]string{} // runner: null after runner_env entries
	}
	for _, e := range pairs(v) { // runner_env (its older name) may have come first
		if old, ok := h.Env.Runner[e.Key.Value]; ok && old != m[e.Key.Value] {
			return yamlx.Errorf(f.File, e.Key, field+"."+e.Key.Value, yamlx.ErrValue, "also set in runner_env with another value (runner_env is the older name of env.runner)")
		}
	}
	for k, v := range h.Env.Runner {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	h.Env.Runner = m
	h.mark(field, v)
	return nil
}

// UnknownKey: the value's names are checked before the key.
func (w *envYAML) UnknownKey(f *yamlx.Fields, e yamlx.Entry) error {
	field := f.Field(e.Key.Value)
	if _, err := yamlx.StringMap(f.File, field, e.Value); err != nil {
		return err
	}
	for _, p := range pairs(e.Value) {
		if !config.ValidEnvName(p.Key.Value) {
			return yamlx.Errorf(f.File, p.Key, field+"."+p.Key.Value, yamlx.ErrValue, "%q is not an environment variable name", p.Key.Value)
		}
	}
	return yamlx.Errorf(f.File, e.Key, field, yamlx.ErrUnknownField, "")
}

// pairs returns the entries of a mapping already decoded (none for null).
func pairs(n *yaml.Node) []yamlx.Entry {
	var out []yamlx.Entry
	if !yamlx.IsNull(n) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, yamlx.Entry{Key: n.Content[i], Value: n.Content[i+1]})
		}
	}
	return out
}

// envNames checks the names of the env mapping under key and records where
// each was written.
func envNames(f *yamlx.Fields, key string, h *Harness) error {
	field := f.Field(key)
	for _, e := range pairs(f.Value(key)) {
		if !config.ValidEnvName(e.Key.Value) {
			return yamlx.Errorf(f.File, e.Key, field+"."+e.Key.Value, yamlx.ErrValue, "%q is not an environment variable name", e.Key.Value)
		}
		h.origin(field+"."+e.Key.Value, e.Key)
	}
	return nil
}

// runnerEnv stores upstream's runner_env: the older name of env.runner,
// with the same meaning and the same rules (names checked, refused in
// remote content): its entries are env.runner entries. A name set both
// here and in env.runner of the same file must have the same value.
func runnerEnv(f *yamlx.Fields, key string, m map[string]string, h *Harness) error {
	if h.Env.Runner == nil {
		h.Env.Runner = map[string]string{}
	}
	for _, e := range pairs(f.Value(key)) {
		k := e.Key.Value
		if !config.ValidEnvName(k) {
			return yamlx.Errorf(f.File, e.Key, f.Field(key)+"."+k, yamlx.ErrValue, "%q is not an environment variable name", k)
		}
		if old, ok := h.Env.Runner[k]; ok && old != m[k] {
			return yamlx.Errorf(f.File, e.Key, f.Field(key)+"."+k, yamlx.ErrValue, "also set in env.runner with another value (runner_env is the older name of env.runner)")
		}
		h.Env.Runner[k] = m[k]
		h.origin("env.runner."+k, e.Key)
	}
	h.mark("env.runner", f.Value(key))
	return nil
}

type securityYAML struct {
	FailMode          string     `yaml:"fail_mode"`
	HostScanners      *yaml.Node `yaml:"host_scanners"` // true/false, or upstream's map
	ContextInjection  *bool      `yaml:"context_injection"`
	SandboxHooks      *yaml.Node `yaml:"sandbox_hooks"`
	TrustRepoSettings *bool      `yaml:"trust_repo_settings"`
	Enabled           *bool      `yaml:"enabled"`
	Escalation        *yaml.Node `yaml:"escalation"`
	Trace             *yaml.Node `yaml:"trace"`
}

func (w *securityYAML) CheckKey(f *yamlx.Fields, key string) error {
	h, field, v := target(f), f.Field(key), f.Value(key)
	switch key {
	case "":
		return nil
	case "fail_mode":
		if w.FailMode != "closed" && w.FailMode != "open" {
			return f.Errorf(key, yamlx.ErrValue, "%q must be closed or open", w.FailMode)
		}
		h.Security.FailMode = w.FailMode
	case "host_scanners":
		if v.Kind == yaml.MappingNode {
			if err := yamlx.Decode(f.File, field, v, &hostScannersYAML{on: true}, h); err != nil {
				return err
			}
			break
		}
		b, err := yamlx.Bool(f.File, field, v)
		if err != nil {
			return err
		}
		h.Security.HostScanners = &b
	case "context_injection":
		h.Security.ContextInjection = w.ContextInjection
	case "sandbox_hooks":
		if err := sandboxHooks(f, key, h); err != nil {
			return err
		}
	case "trust_repo_settings":
		h.Security.TrustRepoSettings = w.TrustRepoSettings
	case "enabled":
		h.Security.Enabled = w.Enabled
	case "escalation":
		return yamlx.Decode(f.File, field, v, &escalationYAML{}, h)
	case "trace":
		return yamlx.Decode(f.File, field, v, &traceYAML{}, h)
	}
	h.mark(field, v)
	return nil
}

// escalationYAML is security.escalation.
type escalationYAML struct {
	OnCritical  string `yaml:"on_critical"`
	ReviewLabel string `yaml:"review_label"`
}

func (w *escalationYAML) CheckKey(f *yamlx.Fields, key string) error {
	h := target(f)
	switch key {
	case "on_critical":
		if w.OnCritical != "halt" && w.OnCritical != "review" {
			return f.Errorf(key, yamlx.ErrValue, "%q must be halt or review", w.OnCritical)
		}
		h.Security.OnCritical = w.OnCritical
	case "review_label":
		if !validLabel(w.ReviewLabel) {
			return f.Errorf(key, yamlx.ErrValue, "%q is not a label (1-50 printable characters, no comma or control character)", w.ReviewLabel)
		}
		h.Security.ReviewLabel = w.ReviewLabel
	case "":
		return nil
	}
	h.mark(f.Field(key), f.Value(key))
	return nil
}

// validLabel: a forge label name (GitHub: at most 50 characters; no comma,
// which separates labels in CI inputs).
func validLabel(s string) bool {
	if s == "" || len(s) > 50 || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == ',' {
			return false
		}
	}
	return true
}

// traceYAML is security.trace.
type traceYAML struct {
	Enabled *bool `yaml:"enabled"`
}

func (w *traceYAML) CheckKey(f *yamlx.Fields, key string) error {
	if key == "enabled" {
		h := target(f)
		h.Security.Trace = w.Enabled
		h.mark(f.Field(key), f.Value(key))
	}
	return nil
}

func sandboxHooks(f *yamlx.Fields, key string, h *Harness) error {
	field := f.Field(key)
	hp, err := yamlx.Pairs(f.File, field, f.Value(key))
	if err != nil {
		return err
	}
	h.Security.SandboxHooks = map[string]bool{}
	for _, e := range hp {
		ef := field + "." + e[0].Value
		if !slices.Contains(KnownSandboxHooks, e[0].Value) {
			return yamlx.Errorf(f.File, e[0], ef, yamlx.ErrUnknownField, "known hooks: %s", strings.Join(KnownSandboxHooks, ", "))
		}
		b, err := yamlx.Bool(f.File, ef, e[1])
		if err != nil {
			return err
		}
		h.Security.SandboxHooks[e[0].Value] = b
	}
	return nil
}

// hostScannersYAML is upstream's map form of security.host_scanners.
// Host-side scans always run here, so a scanner turned off is recorded as
// HostScanners false (the run notes it is ignored); context_injection is
// security.context_injection. llm_guard settings are checked and ignored.
type hostScannersYAML struct {
	UnicodeNormalizer bool         `yaml:"unicode_normalizer"`
	SSRFValidator     bool         `yaml:"ssrf_validator"`
	SecretRedactor    bool         `yaml:"secret_redactor"`
	ContextInjection  bool         `yaml:"context_injection"`
	LLMGuard          llmGuardYAML `yaml:"llm_guard"`
	on                bool
}

func (w *hostScannersYAML) CheckKey(f *yamlx.Fields, key string) error {
	h := target(f)
	switch key {
	case "unicode_normalizer":
		w.on = w.on && w.UnicodeNormalizer
	case "ssrf_validator":
		w.on = w.on && w.SSRFValidator
	case "secret_redactor":
		w.on = w.on && w.SecretRedactor
	case "context_injection":
		b := w.ContextInjection
		h.Security.ContextInjection = &b
		h.mark("security.context_injection", f.Value(key))
	case "":
		on := w.on
		h.Security.HostScanners = &on
	}
	return nil
}

func (w *hostScannersYAML) UnknownKey(f *yamlx.Fields, e yamlx.Entry) error {
	return yamlx.Errorf(f.File, e.Key, f.Field(e.Key.Value), yamlx.ErrUnknownField, "(known: unicode_normalizer, context_injection, ssrf_validator, secret_redactor, llm_guard)")
}

type llmGuardYAML struct {
	Enabled   bool    `yaml:"enabled"`
	Threshold float64 `yaml:"threshold"`
	MatchType string  `yaml:"match_type"`
}

func (w *llmGuardYAML) CheckKey(f *yamlx.Fields, key string) error {
	switch key {
	case "threshold":
		if w.Threshold < 0 || w.Threshold > 1 {
			return f.Errorf(key, yamlx.ErrValue, "must be between 0 and 1")
		}
	case "match_type":
		if w.MatchType != "sentence" && w.MatchType != "full" {
			return f.Errorf(key, yamlx.ErrValue, "%q must be sentence or full", w.MatchType)
		}
	}
	return nil
}

// splitProviders splits a providers: list into provider files (paths,
// URLs) and bare provider names (upstream: a name without "/" that does
// not end in .yaml or .yml names a provider, not a file).
func splitProviders(f *yamlx.Fields, key string, l []string, h *Harness) error {
	h.Providers, h.ProviderNames = nil, nil
	for i, p := range l {
		if strings.Contains(p, "/") || strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") {
			h.Providers = append(h.Providers, p)
			continue
		}
		if !validProviderName(p) {
			return yamlx.Errorf(f.File, f.Value(key).Content[i], fmt.Sprintf("%s[%d]", f.Field(key), i), yamlx.ErrValue, "%q is neither a provider file nor a provider name (A-Z a-z 0-9 _ -)", p)
		}
		h.ProviderNames = append(h.ProviderNames, p)
	}
	return nil
}

func validProviderName(s string) bool {
	return config.ValidChars(s, 128, func(_ int, c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
	})
}

// forge decodes the forge.<name> overlays, each into its own Harness.
func forge(f *yamlx.Fields, key string, h *Harness) error {
	path := f.Field(key)
	overlays, err := yamlx.Pairs(f.File, path, f.Value(key))
	if err != nil {
		return err
	}
	h.Forge = map[string]*Harness{}
	for _, kv := range overlays {
		name := kv[0].Value
		field := path + "." + name
		if !validForgeName(name) {
			return yamlx.Errorf(f.File, kv[0], field, yamlx.ErrValue, "%q is not a forge name (lower-case letters, digits, - and _)", name)
		}
		o := &Harness{File: f.File}
		if err := yamlx.Decode(f.File, field, kv[1], &overlayYAML{}, o); err != nil {
			return err
		}
		o.origins = rekey(o.origins, field+".")
		o.set = rekey(o.set, field+".")
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
func rekey[V any](m map[string]V, prefix string) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[strings.TrimPrefix(k, prefix)] = v
	}
	return out
}

func validForgeName(s string) bool {
	return config.ValidChars(s, 64, func(_ int, c byte) bool {
		return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
	})
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
