package runtime

import (
	"context"
	"errors"
	"io"
	"net/netip"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// Optional capabilities of a runtime. Runtime is what every runtime does;
// the interfaces below are what some do. The runner asserts each one once,
// in one place, and the runtimes that implement one say so with a
// compile-time assertion (var _ runtime.X = (*T)(nil)), so a renamed
// method cannot silently drop a capability.

// ErrResult marks an iteration whose agent ended but whose structured
// result is missing or invalid (errors.Is): not an agent failure, the
// runner judges the result by validation (and feeds the errors back).
var ErrResult = errors.New("structured result missing or invalid")

// ErrCannotSucceed marks a run refused before anything ran because it
// could not succeed (a model endpoint that does not answer, a credential
// that expands to nothing): a usage error of the caller's settings.
var ErrCannotSucceed = errors.New("the run cannot succeed")

// InfoEndpointChanged is the Name of the EventInfo saying that a resumed
// conversation recorded another model endpoint than the run's; the
// runner records its Text as a report note (shown even with --quiet).
const InfoEndpointChanged = "endpoint_changed"

// InfoWorkspace is the Name of the EventInfo saying that a workspace
// snapshot was not taken or not restored; the runner records its Text as
// a report note (shown even with --quiet).
const InfoWorkspace = "workspace_snapshot"

// ProvisionFunc provisions a fresh sandbox session like the run's own
// (same spec and network); the runtime terminates it.
type ProvisionFunc func(ctx context.Context) (sandbox.Session, error)

// ChildSessioner is implemented by runtimes that can run delegated
// children in sandbox sessions of their own; the runner hands them its
// backend's Provision before Bootstrap.
type ChildSessioner interface {
	SetChildSessions(ProvisionFunc)
}

// WebScan scans fetched text as remote context before the model sees it.
// It returns the blocking findings' rules (empty: the text may be shown);
// an error fails the fetch closed.
type WebScan func(ctx context.Context, text []byte, source string) (blocking []string, err error)

// WebPolicy is the egress policy and scan pipeline a runtime that fetches
// web pages on the runner host must apply: it reaches nothing the sandbox
// could not, and every page goes through the run's scanners.
type WebPolicy struct {
	Allow                  []string // the sandbox's network allowlist (host:port entries)
	AllowedPrivateNetworks []netip.Prefix
	Resolver               sandbox.Resolver // nil: the system resolver
	Scan                   WebScan          // required
}

// WebFetcher is implemented by runtimes whose agent may fetch web pages
// from the runner host (native web_fetch). NeedsWeb says whether the run's
// settings ask for it; the runner then calls SetWebPolicy before
// Bootstrap.
type WebFetcher interface {
	NeedsWeb(c Config) bool
	SetWebPolicy(WebPolicy) error
}

// Offered is what a runtime's last Run offered the agent, for the report's
// capability snapshot. Model and Limits are the runtime's own values
// (serialised as they are); none holds a credential.
type Offered struct {
	Tools            []string
	SubagentProfiles []string
	Model            any // the model endpoint: report capabilities.model
	Limits           any // the loop's limits: report capabilities.limits.native
}

// OfferReporter is implemented by runtimes that know what they offered
// the agent (tools, model endpoint, loop limits); false before any Run.
type OfferReporter interface {
	Offered() (Offered, bool)
}

// Preflighter is implemented by runtimes that can tell, from the run's
// settings alone, that the run cannot succeed (a missing model, a model
// endpoint that does not answer). The runner calls Preflight after
// planning, before any host script runs or any sandbox exists; an error
// wrapping ErrCannotSucceed, or any other, stops the run as a usage error.
type Preflighter interface {
	Preflight(in PreflightInput) error
}

// PreflightInput is what Preflight sees of the planned run.
type PreflightInput struct {
	Config    Config // the run's settings (PlanOutput.Config)
	Model     string // the harness model: ("" = none)
	AgentFile string // host path of the agent definition
}

// Resumer is implemented by runtimes that can continue a killed or failed
// run in its run directory (--resume).
type Resumer interface {
	// ResumeFile is the run-directory file every resumable run of the
	// runtime has (its transcript).
	ResumeFile() string
	// VerifyResume checks the state in runDir the runtime would continue
	// (e.g. a transcript's MAC chain) before anything is written.
	VerifyResume(runDir string) error
}

// RepoReader reads the target repository as it is copied into the
// sandbox: no symlink is followed, and a file reached through one is
// absent (it is not in the copy). Paths are slash-separated, relative to
// the repository.
type RepoReader interface {
	// ReadFile reads the regular file rel (ok false: absent or a symlink).
	ReadFile(rel string) (data []byte, ok bool, err error)
	// IsDir reports whether rel is a directory reached without a symlink.
	IsDir(rel string) bool
	// Walk calls fn for every regular file below the directory rel, in
	// name order, with a reader of its content.
	Walk(rel string, fn func(rel string, read func() ([]byte, error)) error) error
}

// RepoCheckInput is what a RepoChecker knows of the run.
type RepoCheckInput struct {
	AgentName         string // the harness's agent
	TrustRepoSettings bool   // security.trust_repo_settings
}

// RepoChecker is implemented by runtimes whose agent CLI reads its own
// settings from the target repository (claude: .claude/settings*.json,
// .claude/agents, .mcp.json). The runner's host scan records the
// findings CheckRepo returns; blocking ones stop the run whatever the
// fail mode (the runtime refuses them again in the sandbox).
type RepoChecker interface {
	CheckRepo(r RepoReader, in RepoCheckInput) ([]scan.Finding, error)
}

// HostCheck is one `fullsend doctor` check: Status is "ok", "warn" or
// "fail"; Fix says what to do when it is not ok.
type HostCheck struct {
	Name, Status, Detail, Fix string
}

// HostCheckInput is what a HostChecker gets from `fullsend doctor`.
type HostCheckInput struct {
	Org *config.Config // config.yaml (nil when it did not load)
	// CLI is the runtime's agent CLI named on the command line
	// (doctor --claude-binary); "" = the configured or default one.
	CLI    string
	Getenv func(string) string // the runner's environment
}

// HostChecker is implemented by runtimes that need something on the
// runner host (the claude runtime: its CLI at the version CI tests);
// `fullsend doctor` reports what CheckHost finds.
type HostChecker interface {
	CheckHost(ctx context.Context, in HostCheckInput) HostCheck
}

// TranscriptPrinter is implemented by runtimes whose transcript
// `fullsend runs show --transcript` can print for people (native).
// PrintTranscript checks the transcript in runDir as a resume would and
// writes run id's conversation to w, every untrusted text sanitised for a
// terminal.
type TranscriptPrinter interface {
	PrintTranscript(w io.Writer, id, runDir string) error
}

// Unguarded is implemented by runtimes that make no tool-call security
// checks of their own and so have no block, denial or canary trip to turn
// into verdicts (the script runtime runs no model); Unguarded says why.
// Every other runtime is held to the verdict contract: its tests run
// runtimetest.CheckVerdicts (package builtin's tests check that each one
// does).
type Unguarded interface {
	Unguarded() string
}
