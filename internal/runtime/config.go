package runtime

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// Config is a runtime's typed settings of one run: decoded by the runtime
// from its command-line flags (Flags) and its harness and config.yaml
// fields (Planner), carried by the runner's plan without looking inside,
// and handed back to the runtime as RunInput.Options.
type Config interface {
	// Options encodes the settings as RunInput.Options (the runtime's own
	// keys); they are also the plan's runtime_options.
	Options() map[string]string
}

// Flags binds a runtime's command-line flags to one command.
type Flags interface {
	// Add registers the flags on fl. A flag of the same name already on
	// fl (a shared one: AddSharedFlags) is not registered again.
	Add(fl *pflag.FlagSet)
	// Parse checks the flags set on the command line and returns the
	// runtime's settings from them (nil: none) and the names set
	// ("--model"), shared ones included. A bad value is a usage error.
	Parse(fl *pflag.FlagSet) (Config, []string, error)
}

// FlagOwner is implemented by runtimes that take command-line flags.
type FlagOwner interface {
	NewFlags() Flags
}

// Selector is implemented by Flags whose flags, when set, choose their
// runtime when --runtime is not given (the script runtime's --script).
type Selector interface {
	Selects(fl *pflag.FlagSet) bool
}

// Planner is implemented by runtimes with settings: Plan decodes the
// runtime's harness and config.yaml fields over the command-line settings
// into the run's Config. It reads files but writes nothing and starts
// nothing.
type Planner interface {
	Plan(in PlanInput) (*PlanOutput, error)
}

// PlanInput is what a runtime's planner sees of the run being planned.
type PlanInput struct {
	Harness     *harness.Materialized // resolved (every reference a local path)
	HarnessFile string                // the harness's local file ("" when remote)
	Org         *config.Config        // config.yaml
	Backend     string                // sandbox backend name
	// Flags are the runtime's settings from the command line (its
	// Flags.Parse; nil: none).
	Flags Config
	// Resume is set when the run continues an earlier one (--resume).
	Resume bool
	Getenv func(string) string // the runner's environment
}

// TargetPlanner is implemented by Planners whose settings depend on the
// target repository (the native runtime's prompt images): the runner
// calls PlanTarget with the Config Plan returned once the target is
// known; it may complete c.
type TargetPlanner interface {
	PlanTarget(c Config, in TargetInput) error
}

// TargetInput is the planned target repository.
type TargetInput struct {
	Repo     string   // host directory copied into the sandbox ("" = none)
	Excluded []string // paths inside Repo that are not copied
	Cwd      string   // the runner's working directory
	Resume   bool     // the run continues an earlier one
}

// PlanOutput is a runtime's part of the plan.
type PlanOutput struct {
	Config Config // the run's settings (nil: none)
	// Model replaces the harness model: when set (a --model flag).
	Model string
	// Mounts are host paths bound into the sandbox (the runner's agent
	// CLI); HostServices runner-host endpoints the sandbox must reach.
	Mounts       []sandbox.Mount
	HostServices []HostService
	// Install describes what of the runner host the runtime uses in the
	// sandbox (serialised in the plan); nil: nothing.
	Install any
	// Notes go to the plan's notes; Downgrades are notes that say an
	// enforcement is weaker than asked.
	Notes      []string
	Downgrades []string
	// Unavailable is why the runtime cannot run on this host (its CLI not
	// found): reported before anything is provisioned, not a planning
	// error, so that planning stays free of side effects and testable.
	Unavailable error
	// KeySecrets are the runtime's credential variables: an org secret of
	// one of these names is the run's by default, and a value left in
	// env.sandbox is warned about (it enters the sandbox).
	KeySecrets []string
	// SandboxEnv, when set, filters env.sandbox before it enters the
	// sandbox: it returns the entries to drop with the reason (the native
	// runtime's model key never enters the sandbox).
	SandboxEnv func(env map[string]string) (drop map[string]string)
}

// HostService is one runner-host endpoint reachable from the sandbox at
// the same address, and the setting that granted it.
type HostService struct {
	Addr string `json:"addr"` // "IP:PORT" on the runner's loopback
	From string `json:"from"`
}

// PlanError is a runtime's planning failure naming the harness field or
// flag.
type PlanError struct {
	Field string
	Err   error
}

func (e *PlanError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *PlanError) Unwrap() error { return e.Err }

// ErrImage marks a refused prompt image (--image): bad usage, the CLI
// exits 2 on it.
var ErrImage = errors.New("prompt image refused")

// ImageChecker is implemented by runtimes that attach images to the
// prompt: CheckImage resolves img (relative to cwd, symlinks resolved)
// and returns its real path when the runtime accepts it: inside repo (the
// target repository, symlinks resolved), outside excluded (the parts not
// copied into the sandbox), of a type and size the runtime takes.
type ImageChecker interface {
	CheckImage(img, cwd, repo string, excluded []string) (string, error)
}

// IgnoredEffort is the note of a runtime without a reasoning effort
// setting for a harness that sets effort: (nil when it does not).
func IgnoredEffort(h *harness.Materialized) []string {
	if h == nil || h.Effort == "" {
		return nil
	}
	return []string{fmt.Sprintf("effort: %s ignored: only the claude runtime has a reasoning effort setting", h.Effort)}
}
