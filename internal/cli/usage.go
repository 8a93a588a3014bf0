package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// Usage errors that name their fix: a missing argument by the name the
// command's usage line gives it, an unknown flag with the closest flag the
// command has, an unknown completion shell with the ones there are. All
// exit 2 (usageError).

// polishUsage installs those messages on root and every command below it.
func polishUsage(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageError{flagHint(cmd, err)}
	})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "completion" && c.Parent() == root {
			shells := make([]string, 0, len(c.Commands()))
			for _, s := range c.Commands() {
				if !s.Hidden && s.Name() != "help" {
					shells = append(shells, s.Name())
				}
			}
			c.Args = func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					return usageError{fmt.Errorf("missing SHELL: one of %s (see %s --help)", strings.Join(shells, ", "), cmd.CommandPath())}
				}
				return usageError{fmt.Errorf("completion %q: not a supported shell; choose one of %s", args[0], strings.Join(shells, ", "))}
			}
			c.RunE = func(cmd *cobra.Command, args []string) error { return c.Args(cmd, args) }
		}
		if c.Args != nil {
			orig := c.Args
			c.Args = func(cmd *cobra.Command, args []string) error {
				err := orig(cmd, args)
				if err == nil || len(args) > 0 || !strings.Contains(err.Error(), "arg(s)") {
					return err // a command's own message stays
				}
				if name := argName(cmd.Use); name != "" {
					return usageError{fmt.Errorf("missing %s (see %s --help)", name, cmd.CommandPath())}
				}
				return err
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
}

// argName is the first argument a usage line names ("lock [--update]
// HARNESS" → "HARNESS"): an upper-case word outside brackets.
func argName(use string) string {
	for _, w := range strings.Fields(use)[1:] {
		w = strings.TrimSuffix(w, "...")
		if strings.ContainsAny(w, "[]-") {
			continue
		}
		if i := strings.IndexByte(w, '|'); i >= 0 {
			w = w[:i] // "RUN_ID|PREFIX|latest": the first alternative
		}
		if w != "" && w == strings.ToUpper(w) && strings.IndexFunc(w, func(r rune) bool { return r >= 'A' && r <= 'Z' }) >= 0 {
			return w
		}
	}
	return ""
}

// flagHint adds "did you mean --X?" to an unknown-flag error when the
// command has a flag of a close name.
func flagHint(cmd *cobra.Command, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	add := func(f *pflag.Flag) {
		if !f.Hidden && !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	cmd.Flags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	if s := yamlx.Suggest(name, names); s != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, s)
	}
	return err
}
