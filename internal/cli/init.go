package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/scaffold"
)

func newInitCmd(env *Env) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "init [--force] [DIR]",
		Short: "Create a fullsend dir with a config and a harness that runs as is",
		Long: `init writes a new fullsend dir into DIR (default: --fullsend-dir, ./.fullsend):

  config.yaml                       every setting, commented, at its default;
                                    agents: registers harness/hello.yaml as "hello"
  harness/hello.yaml                a harness using the script runtime
  harness/hello.script.yaml         the script runtime's steps (stand-in for a model)
  agents/hello.md                   the agent definition
  skills/hello/SKILL.md             a local skill
  policies/hello.yaml               the sandbox policy
  schemas/hello-result.schema.json  the result the agent must produce

The harness runs as is in the local sandbox, without a model or network:
'fullsend run DIR/harness/hello.yaml'. init refuses to overwrite any existing
file (exit 1, naming them) unless --force is given.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := env.FullsendDir
			if len(args) == 1 {
				if args[0] == "" {
					return usageError{errors.New("DIR is empty")}
				}
				var err error
				if dir, err = filepath.Abs(args[0]); err != nil {
					return usageError{fmt.Errorf("DIR %q: %w", args[0], err)}
				}
			}
			written, err := scaffold.Write(dir, force)
			if err != nil {
				return err
			}
			shown := displayPath(dir)
			fmt.Fprintf(env.Stdout, "initialised fullsend dir %s:\n", shown)
			for _, p := range written {
				fmt.Fprintf(env.Stdout, "  %s\n", filepath.Join(shown, filepath.FromSlash(p)))
			}
			harnessArg := shellQuote(filepath.Join(shown, filepath.FromSlash(scaffold.Harness)))
			fmt.Fprintln(env.Stdout, "next:")
			fmt.Fprintf(env.Stdout, "  fullsend validate %s\n", harnessArg)
			cwd, _ := os.Getwd()
			if runpkg.FindGitRoot(cwd) == "" {
				// Outside a git repository a run needs to be told what the
				// agent works on.
				fmt.Fprintf(env.Stdout, "  fullsend run --target-repo none %s   (no git repository here: --target-repo DIR names the one the agent works on)\n", harnessArg)
			} else {
				fmt.Fprintf(env.Stdout, "  fullsend run %s\n", harnessArg)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite existing files")
	return cmd
}
