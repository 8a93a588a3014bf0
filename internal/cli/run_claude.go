package cli

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fullsend-ai/fullsend/internal/config"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/runtime/claude"
	"github.com/fullsend-ai/fullsend/internal/runtime/native"
)

// claudeFlags are the claude runtime's settings on the command line; each
// wins over config.yaml runtimes.claude. --model and --max-turns are
// shared with the native runtime (nativeFlags).
type claudeFlags struct {
	binary, permissionMode, effort string
	debug                          bool
}

func (c *claudeFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&c.binary, "claude-binary", "", "claude runtime: the Claude Code CLI on this host, a `PATH` or a command on $PATH, bound into the sandbox (default: config runtimes.claude.binary, claude)")
	fl.StringVar(&c.permissionMode, "permission-mode", "", "claude runtime: --permission-mode `MODE` of Claude Code (default: config runtimes.claude.permission_mode, bypassPermissions; the security hooks apply in every mode)")
	fl.StringVar(&c.effort, "effort", "", "claude runtime: reasoning effort `LEVEL`: "+strings.Join(config.ClaudeEffortLevels, ", ")+" (default: harness effort:, config runtimes.claude.effort)")
	fl.BoolVar(&c.debug, "claude-debug", true, "claude runtime: write Claude Code's debug log into the run directory (default: config runtimes.claude.debug, true)")
}

// sharedModelFlags are the native flags the claude runtime honours too.
var sharedModelFlags = []string{"--model", "--max-turns"}

// options checks the claude flags given and returns them as claude
// RunInput options (with --max-turns from the native flags), the model of
// --model, and the names of the claude-only flags given.
func (c *claudeFlags) options(fl *pflag.FlagSet, nativeOpts map[string]string) (map[string]string, string, []string, error) {
	opts := map[string]string{}
	var given []string
	if fl.Changed("claude-binary") {
		given = append(given, "--claude-binary")
		if err := config.CheckClaudeBinary(c.binary); err != nil {
			return nil, "", nil, fmt.Errorf("--claude-binary: %w", err)
		}
	}
	if fl.Changed("permission-mode") {
		given = append(given, "--permission-mode")
		if err := config.CheckPermissionMode(c.permissionMode); err != nil {
			return nil, "", nil, fmt.Errorf("--permission-mode: %w", err)
		}
		opts[claude.OptPermissionMode] = c.permissionMode
	}
	if fl.Changed("effort") {
		given = append(given, "--effort")
		if err := config.CheckEffort(c.effort); err != nil {
			return nil, "", nil, fmt.Errorf("--effort: %w", err)
		}
		opts[claude.OptEffort] = c.effort
	}
	if fl.Changed("claude-debug") {
		given = append(given, "--claude-debug")
		opts[claude.OptDebug] = strconv.FormatBool(c.debug)
	}
	if v := nativeOpts[native.OptMaxTurns]; v != "" {
		opts[claude.OptMaxTurns] = v
	}
	return opts, nativeOpts[native.OptModel], given, nil
}

// checkRuntimeFlags refuses flags of another runtime than rt: native
// flags other than --model and --max-turns need native, claude flags
// need claude.
func checkRuntimeFlags(rt string, nativeGiven, claudeGiven []string) error {
	if rt != native.Name {
		var only []string
		for _, f := range nativeGiven {
			if rt != claude.Name || !slices.Contains(sharedModelFlags, f) {
				only = append(only, f)
			}
		}
		if len(only) > 0 {
			return fmt.Errorf("%s: only for the native runtime (runtime is %q)", strings.Join(only, ", "), rt)
		}
	}
	if rt != claude.Name && len(claudeGiven) > 0 {
		return fmt.Errorf("%s: only for the claude runtime (runtime is %q)", strings.Join(claudeGiven, ", "), rt)
	}
	return nil
}

// verdictSummary counts the findings that are security verdicts of the
// agent's sandbox hooks (phase agent[N]): ", of which 4 tool calls denied
// and 5 outputs blocked by sandbox hooks".
func verdictSummary(r *runpkg.Report) string {
	calls, outputs := 0, 0
	for _, f := range r.Findings {
		if !strings.HasPrefix(f.Phase, "agent[") {
			continue
		}
		if strings.HasPrefix(f.Message, "blocked the output") {
			outputs++
		} else {
			calls++
		}
	}
	if calls+outputs == 0 {
		return ""
	}
	return fmt.Sprintf(", of which %d tool call(s) denied and %d output(s) blocked by sandbox hooks", calls, outputs)
}
