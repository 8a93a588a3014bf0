package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/hooks"
)

// hookBlockCode is the exit status Claude Code reads as "block, stderr is
// the reason". Every failure of a hook exits with it (fail closed).
const hookBlockCode = 2

func newHookCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook NAME",
		Short: "Run a sandbox tool hook (Claude Code hook protocol, used inside the sandbox)",
		Long: `hook runs one security hook on a Claude Code hook payload read from stdin
and answers on stdout in Claude Code's hook protocol. The claude runtime wires
these commands into .claude/settings.json; they are not meant to be run by hand.

settings.json wires one process per event: ` + "`fullsend hook " + hooks.EachCommand + " NAME...`" + `
runs the named hooks of that event, each under its own tool matcher, and
answers with the first that blocks.

Exit status: 0 with no output = allow; 0 with a JSON decision = deny / block;
2 = the hook could not decide (the reason is on stderr): Claude Code blocks.

Hooks:
` + hookList(),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errMissingHook}
			}
			return usageError{unknownHookErr(args[0])}
		},
		RunE: func(*cobra.Command, []string) error { return nil },
	}
	var eachAllow []string
	each := &cobra.Command{
		Use:   hooks.EachCommand + " NAME...",
		Short: "runs the named hooks of one event in one process (how settings.json wires them)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, names []string) error {
			henv := hooks.NewEnv(env.Getenv)
			if c.Flags().Changed(hooks.AllowFlag) {
				named := false
				for _, n := range names {
					named = named || n == hooks.ToolAllowlistHook
				}
				if !named {
					return &ExitError{Code: hookBlockCode, Err: hookError("hook each: --" + hooks.AllowFlag + " given without " + hooks.ToolAllowlistHook)}
				}
				henv.ToolAllowlists = eachAllow
			}
			if _, err := hooks.HandleEach(c.Context(), names, env.Stdin, env.Stdout, henv); err != nil {
				return &ExitError{Code: hookBlockCode, Err: err}
			}
			return nil
		},
	}
	each.Flags().StringArrayVar(&eachAllow, hooks.AllowFlag, nil,
		"a tool allowlist for "+hooks.ToolAllowlistHook+" (repeatable: each must permit the call; replaces "+hooks.EnvToolAllowlist+")")
	cmd.AddCommand(each)
	for _, h := range hooks.All() {
		name := h.Name
		var allow []string
		sub := &cobra.Command{
			Use:   name,
			Short: h.Summary,
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				henv := hooks.NewEnv(env.Getenv)
				if c.Flags().Changed(hooks.AllowFlag) {
					// The lists on the command line (written by the runtime
					// into settings.json) replace FULLSEND_TOOL_ALLOWLIST.
					henv.ToolAllowlists = allow
				}
				_, err := hooks.Handle(c.Context(), name, env.Stdin, env.Stdout, henv)
				if err != nil {
					return &ExitError{Code: hookBlockCode, Err: err}
				}
				return nil
			},
		}
		if name == hooks.ToolAllowlistHook {
			sub.Flags().StringArrayVar(&allow, hooks.AllowFlag, nil,
				"a tool allowlist in Claude Code permission syntax, e.g. 'Bash(gh,jq),Read' (repeatable: each must permit the call; replaces "+hooks.EnvToolAllowlist+")")
		}
		cmd.AddCommand(sub)
	}
	return cmd
}

type hookError string

func (e hookError) Error() string { return string(e) }

const errMissingHook = hookError("hook: missing hook name (known: see `fullsend hook --help`)")

func unknownHookErr(name string) error {
	return hookError("hook " + `"` + name + `"` + ": unknown (known: " + strings.Join(hooks.Names(), ", ") + ")")
}

func hookList() string {
	var b strings.Builder
	for _, h := range hooks.All() {
		b.WriteString("  " + h.Name + strings.Repeat(" ", max(1, 27-len(h.Name))) + h.Event + ": " + h.Summary + "\n")
	}
	return b.String()
}
