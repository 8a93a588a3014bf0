package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/resolve"
)

func newPinCmd(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "pin [--json] URL",
		Short: "Print the pinned reference (URL#sha256=…) of a remote file or skill directory",
		Long: `pin fetches URL under config.yaml's fetch policy (allowed hosts, forges and
their tokens, size and time limits) and prints the reference to write in a
harness: URL#sha256=HASH, the file's sha256 or a forge directory's tree hash.
A forge URL naming a branch or tag is first resolved to the commit it names
now, and the printed URL names that commit, so the reference cannot move.
Nothing is cached and nothing is scanned here: review what the URL serves
before you use it; resolve and run scan it when a harness uses it. Allow the
URL's prefix in the harness and in config.yaml (allowed_remote_resources).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := env.LoadConfig()
			if err != nil {
				return err
			}
			p, err := resolve.Pin(cmd.Context(), cfg, env.Getenv, testOnlyFetchOptions, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(env.Stdout, p)
			}
			_, err = fmt.Fprintln(env.Stdout, p.Ref)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"ref", "url", "sha256", "type", "commit"}`)
	return cmd
}
