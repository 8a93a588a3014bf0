package native

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/fullsend-ai/fullsend/internal/frontmatter"
	"github.com/fullsend-ai/fullsend/internal/model"
	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// The native runtime's part of the runner's contract: its typed settings,
// flags, planning, preflight check and optional capabilities.
var (
	_ runtime.FlagOwner      = (*Runtime)(nil)
	_ runtime.Planner        = (*Runtime)(nil)
	_ runtime.Preflighter    = (*Runtime)(nil)
	_ runtime.ChildSessioner = (*Runtime)(nil)
	_ runtime.WebFetcher     = (*Runtime)(nil)
	_ runtime.OfferReporter  = (*Runtime)(nil)
	_ runtime.ImageChecker   = (*Runtime)(nil)
	_ runtime.TargetPlanner  = (*Runtime)(nil)
	_ runtime.Resumer        = (*Runtime)(nil)
	_ runtime.Config         = (*Config)(nil)
)

// Config is the native runtime's settings of one run (RunInput.Options
// in its encoding, Options).
type Config struct {
	// Model server settings from the command line ("" = the
	// FULLSEND_MODEL_* environment, then the harness model:).
	API, BaseURL, Model, Auth, KeyEnv string
	MaxTurns                          int   // 0 = DefaultMaxTurns
	MaxOutputTokens                   int64 // 0 = the default budget
	CompactTokens                     int64 // 0 = never compact
	Resume                            bool  // continue the transcript in the run directory
	AllowFetch                        bool  // offer fetch_skill (allow_runtime_fetch)
	// SubagentProfiles is the encoded profile list ("none": no
	// delegate_task; "" = not planned); MaxParallel the children at once
	// (0 = not planned).
	SubagentProfiles string
	MaxParallel      int
	WebFetch         bool     // offer web_fetch (needs SetWebPolicy)
	Images           []string // host files attached to the first message
}

// Options implements runtime.Config.
func (c *Config) Options() map[string]string {
	o := map[string]string{}
	set := func(k, v string) {
		if v != "" {
			o[k] = v
		}
	}
	set(OptAPI, c.API)
	set(OptBaseURL, c.BaseURL)
	set(OptModel, c.Model)
	set(OptAuth, c.Auth)
	set(OptKeyEnv, c.KeyEnv)
	if c.MaxTurns > 0 {
		o[OptMaxTurns] = strconv.Itoa(c.MaxTurns)
	}
	if c.MaxOutputTokens > 0 {
		o[OptMaxOutputTokens] = strconv.FormatInt(c.MaxOutputTokens, 10)
	}
	if c.CompactTokens > 0 {
		o[OptCompactTokens] = strconv.FormatInt(c.CompactTokens, 10)
	}
	if c.Resume {
		o[OptResume] = "true"
	}
	if c.AllowFetch {
		o[OptAllowFetch] = "true"
	}
	set(OptSubagentProfiles, c.SubagentProfiles)
	if c.MaxParallel > 0 {
		o[OptMaxParallel] = strconv.Itoa(c.MaxParallel)
	}
	if c.WebFetch {
		o[OptWebFetch] = "true"
	}
	set(OptImages, strings.Join(c.Images, "\n"))
	return o
}

// flags are the native runtime's command-line flags. Each becomes a
// setting only when given, so that the runtime's own precedence applies:
// flag > FULLSEND_MODEL_* environment > the harness model field.
type flags struct {
	api, baseURL, auth, keyEnv string
	maxOutputTokens            int64
	compactTokens              int64
	images                     []string
}

// NewFlags implements runtime.FlagOwner.
func (r *Runtime) NewFlags() runtime.Flags { return &flags{} }

func (n *flags) Add(fl *pflag.FlagSet) {
	fl.StringVar(&n.api, "model-api", "", "native runtime: model API `DIALECT`, openai or anthropic (default: $FULLSEND_MODEL_API, openai)")
	fl.StringVar(&n.baseURL, "model-base-url", "", "native runtime: model server base `URL` (default: $FULLSEND_MODEL_BASE_URL, the vendor's public API)")
	fl.StringVar(&n.auth, "model-auth", "", "native runtime: `MODE` bearer (send the key) or none (default: $FULLSEND_MODEL_AUTH, bearer)")
	fl.StringVar(&n.keyEnv, "model-key-env", "", "native runtime: read the API key from host variable `VAR` (default: $FULLSEND_MODEL_KEY_ENV, FULLSEND_API_KEY); the key never enters the sandbox")
	runtime.AddSharedFlags(fl)
	fl.Int64Var(&n.maxOutputTokens, "max-output-tokens", 0, "native runtime: at most `N` output tokens over the whole run (default 200000)")
	fl.Int64Var(&n.compactTokens, "compact-tokens", 0, "native runtime: when a model call's input reaches `N` tokens, summarise the older turns into a compaction record before the next call (default: never; see docs/long-runs.md)")
	fl.StringArrayVar(&n.images, "image", nil, "native runtime: attach image `FILE` (png, jpeg, gif, webp; at most 5 MiB; inside the target repository) to the prompt; repeatable")
}

func (n *flags) Parse(fl *pflag.FlagSet) (runtime.Config, []string, error) {
	c := &Config{}
	var given []string
	str := func(flag string, dst *string, val string, allowed ...string) error {
		if !fl.Changed(flag) {
			return nil
		}
		given = append(given, "--"+flag)
		v := strings.TrimSpace(val)
		if allowed != nil {
			v = strings.ToLower(v)
			if !slices.Contains(allowed, v) {
				return fmt.Errorf("--%s %q: want %s", flag, val, strings.Join(allowed, " or "))
			}
		}
		if v == "" {
			return fmt.Errorf("--%s: empty value", flag)
		}
		*dst = v
		return nil
	}
	shared := func() error {
		m, set, err := runtime.SharedModel(fl)
		if set {
			given = append(given, "--"+runtime.FlagModel)
		}
		c.Model = m
		return err
	}
	for _, f := range []func() error{
		func() error {
			return str("model-api", &c.API, n.api, string(model.APIOpenAI), string(model.APIAnthropic))
		},
		func() error { return str("model-base-url", &c.BaseURL, n.baseURL) },
		shared,
		func() error {
			return str("model-auth", &c.Auth, n.auth, string(model.AuthBearer), string(model.AuthNone))
		},
		func() error { return str("model-key-env", &c.KeyEnv, n.keyEnv) },
	} {
		if err := f(); err != nil {
			return nil, nil, err
		}
	}
	turns, set, err := runtime.SharedMaxTurns(fl)
	if set {
		given = append(given, "--"+runtime.FlagMaxTurns)
	}
	if err != nil {
		return nil, nil, err
	}
	c.MaxTurns = turns
	if fl.Changed("max-output-tokens") {
		given = append(given, "--max-output-tokens")
		if n.maxOutputTokens <= 0 {
			return nil, nil, fmt.Errorf("--max-output-tokens %d: want a positive number", n.maxOutputTokens)
		}
		c.MaxOutputTokens = n.maxOutputTokens
	}
	if fl.Changed("compact-tokens") {
		given = append(given, "--compact-tokens")
		if n.compactTokens <= 0 {
			return nil, nil, fmt.Errorf("--compact-tokens %d: want a positive number", n.compactTokens)
		}
		c.CompactTokens = n.compactTokens
	}
	if fl.Changed("image") {
		given = append(given, "--image")
		for _, img := range n.images {
			if strings.TrimSpace(img) == "" {
				return nil, nil, errors.New("--image: empty value")
			}
		}
		c.Images = slices.Clone(n.images)
	}
	return c, given, nil
}

// Plan implements runtime.Planner: the command-line settings, resume,
// runtime fetch and the harness's native: fields (delegation, web_fetch),
// the checked prompt images, and the model key kept out of the sandbox.
func (r *Runtime) Plan(in runtime.PlanInput) (*runtime.PlanOutput, error) {
	c := &Config{}
	if fc, ok := in.Flags.(*Config); ok && fc != nil {
		*c = *fc
	}
	h := in.Harness
	c.Resume = in.Resume
	c.AllowFetch = h.AllowRuntimeFetch
	c.SubagentProfiles = "none"
	if prof := h.EffectiveSubagentProfiles(); len(prof) > 0 {
		c.SubagentProfiles = strings.Join(prof, ",")
	}
	c.MaxParallel = h.EffectiveMaxParallelChildren()
	c.WebFetch = slices.Contains(h.Native.Tools, ToolWebFetch)
	getenv := in.Getenv
	out := &runtime.PlanOutput{Config: c, Notes: runtime.IgnoredEffort(h), SandboxEnv: func(env map[string]string) map[string]string {
		return c.modelKeyEntries(env, getenv)
	}}
	return out, nil
}

// PlanTarget implements runtime.TargetPlanner: the prompt images given
// are checked (not with resume, inside the target repository, at most
// MaxPromptImages) and replaced by their real paths.
func (r *Runtime) PlanTarget(rc runtime.Config, in runtime.TargetInput) error {
	c, _ := rc.(*Config)
	if c == nil || len(c.Images) == 0 {
		return nil
	}
	fail := func(format string, a ...any) error {
		return &runtime.PlanError{Field: "--image", Err: fmt.Errorf("%w: "+format, append([]any{runtime.ErrImage}, a...)...)}
	}
	if in.Resume {
		return fail("not with --resume (the resumed transcript keeps its images)")
	}
	if in.Repo == "" {
		return fail("images must lie inside the target repository, and there is none")
	}
	repo, err := filepath.EvalSymlinks(in.Repo)
	if err != nil {
		return fail("target repository %s: %v", in.Repo, err)
	}
	var paths []string
	for _, img := range c.Images {
		real, err := r.CheckImage(img, in.Cwd, repo, in.Excluded)
		if err != nil {
			return fail("%v", err)
		}
		paths = append(paths, real)
	}
	if len(paths) > MaxPromptImages {
		return fail("%d images, at most %d", len(paths), MaxPromptImages)
	}
	c.Images = paths
	return nil
}

// imageTypes are the media types a prompt image may have (by content
// sniffing).
var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// CheckImage implements runtime.ImageChecker: the image must be a regular
// file of at most MaxImageBytes inside repo (the copy the agent sees),
// outside the parts not copied, whose content is png, jpeg, gif or webp.
func (r *Runtime) CheckImage(img, cwd, repo string, excluded []string) (string, error) {
	if strings.ContainsAny(img, "\n\r") {
		return "", fmt.Errorf("%q: control characters in the path", img)
	}
	abs := img
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cwd, img)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %v", img, errors.Unwrap(err))
	}
	if !within(real, repo) {
		return "", fmt.Errorf("%s: resolves to %s, outside the target repository %s", img, real, repo)
	}
	for _, ex := range excluded {
		if exr, err := filepath.EvalSymlinks(ex); err == nil && (within(real, exr) || real == exr) {
			return "", fmt.Errorf("%s: inside %s, which is not copied into the sandbox", img, ex)
		}
	}
	f, err := os.Open(real)
	if err != nil {
		return "", fmt.Errorf("%s: %v", img, errors.Unwrap(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file", img)
	}
	if st.Size() > MaxImageBytes {
		return "", fmt.Errorf("%s: %d bytes, more than %d", img, st.Size(), MaxImageBytes)
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	if mt := http.DetectContentType(head[:n]); !slices.Contains(imageTypes, mt) {
		return "", fmt.Errorf("%s: %s is not png, jpeg, gif or webp", img, mt)
	}
	return real, nil
}

// within reports whether p lies strictly inside dir.
func within(p, dir string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && r != "." && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// modelKeyEntries are the env.sandbox entries that carry the model API
// key (named like the key's variable, or whose value contains the key),
// with the reason: they never enter the sandbox. The key is looked up as
// the runtime will (flag, then FULLSEND_MODEL_KEY_ENV, then
// FULLSEND_API_KEY), only with bearer auth.
func (c *Config) modelKeyEntries(env map[string]string, getenv func(string) string) map[string]string {
	pick := func(opt, envName, def string) string {
		if v := strings.TrimSpace(opt); v != "" {
			return v
		}
		if v := strings.TrimSpace(getenv(envName)); v != "" {
			return v
		}
		return def
	}
	if !strings.EqualFold(pick(c.Auth, model.EnvAuth, string(model.AuthBearer)), string(model.AuthBearer)) {
		return nil
	}
	keyEnv := pick(c.KeyEnv, model.EnvKeyEnv, model.EnvAPIKey)
	key := strings.TrimSpace(getenv(keyEnv))
	drop := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if k == keyEnv || (len(key) >= 4 && strings.Contains(env[k], key)) {
			drop[k] = fmt.Sprintf("it carries the model API key (%s), which never enters the sandbox", keyEnv)
		}
	}
	return drop
}

// Preflight implements runtime.Preflighter: it builds the model
// configuration as Run will (flags > FULLSEND_MODEL_* > harness model: >
// agent frontmatter model:), so a missing model, key or a bad base URL is
// a usage error before any sandbox exists, and an endpoint named
// explicitly must answer. A resumed run keeps its recorded endpoint and
// is not checked.
func (r *Runtime) Preflight(in runtime.PreflightInput) error {
	c, _ := in.Config.(*Config)
	if c == nil {
		c = &Config{}
	}
	if c.Resume {
		return nil
	}
	harnessModel := strings.TrimSpace(in.Model)
	if harnessModel == "" && in.AgentFile != "" {
		if data, err := readHead(in.AgentFile); err == nil {
			if fm, err := frontmatter.Parse(in.AgentFile, data); err == nil {
				if m, ok := fm.Fields["model"].(string); ok {
					harnessModel = strings.TrimSpace(m)
				}
			}
		}
	}
	mc, err := model.ConfigFromEnv(r.o.Getenv, model.Overrides{
		API: c.API, BaseURL: c.BaseURL, Model: c.Model, Auth: c.Auth, KeyEnv: c.KeyEnv, HarnessModel: harnessModel,
	})
	if err != nil {
		return fmt.Errorf("runtime native: %w", err)
	}
	// The default public endpoints are left to the run.
	if from := mc.Origin["base_url"]; from != "" && from != "default" {
		if err := checkEndpoint(mc.BaseURL); err != nil {
			src := "$" + model.EnvBaseURL
			if from == "flag" {
				src = "--model-base-url"
			}
			return fmt.Errorf("runtime native: %w: model endpoint %s (%s) is unreachable: %v; start the model server, or correct %s", runtime.ErrCannotSucceed, mc.BaseURL, src, err, src)
		}
	}
	return nil
}

// readHead reads at most yamlx.MaxFileSize bytes of a file.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, yamlx.MaxFileSize))
}

// endpointDialTimeout bounds the reachability check of a model endpoint.
const endpointDialTimeout = 3 * time.Second

// checkEndpoint opens (and closes) a TCP connection to the host of base, a
// model endpoint URL configured explicitly; nothing is sent.
func checkEndpoint(base string) error {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not a URL", base)
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	c, err := net.DialTimeout("tcp", net.JoinHostPort(u.Hostname(), port), endpointDialTimeout)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			err = oe.Err
		}
		return err
	}
	return c.Close()
}

// NeedsWeb implements runtime.WebFetcher: the parent's web_fetch
// (native.tools) or a delegate_task child of the web_fetch profile
// (native.subagent_profiles) needs the client.
func (r *Runtime) NeedsWeb(rc runtime.Config) bool {
	c, _ := rc.(*Config)
	if c == nil {
		return false
	}
	return c.WebFetch || slices.Contains(strings.Split(c.SubagentProfiles, ","), ProfileWebFetch)
}

// SetWebPolicy implements runtime.WebFetcher (SetWeb with the runner's
// policy).
func (r *Runtime) SetWebPolicy(p runtime.WebPolicy) error {
	return r.SetWeb(WebConfig{Allow: p.Allow, AllowedPrivateNetworks: p.AllowedPrivateNetworks, Resolver: p.Resolver, Scan: WebScan(p.Scan)})
}

// ResumeFile implements runtime.Resumer: a resumable run has a transcript.
func (r *Runtime) ResumeFile() string { return TranscriptFile }

// VerifyResume implements runtime.Resumer: the transcript (and the images
// it names) must verify against this user's run key, and the workspace
// snapshot it names against its digest.
func (r *Runtime) VerifyResume(runDir string) error {
	st, err := LoadState(runDir)
	if err != nil {
		return err
	}
	return VerifySnapshot(runDir, st)
}

// Offered implements runtime.OfferReporter from the last Run's Snapshot.
func (r *Runtime) Offered() (runtime.Offered, bool) {
	s, ok := r.Snapshot()
	if !ok {
		return runtime.Offered{}, false
	}
	return runtime.Offered{Tools: s.Tools, SubagentProfiles: s.SubagentProfiles, Model: &s.Model, Limits: &s.Limits}, true
}
