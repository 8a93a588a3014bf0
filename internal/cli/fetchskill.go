package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/fetchsvc"
)

// newFetchSkillCmd is `fullsend fetch-skill URL`, run by agents inside the
// sandbox: it asks the runner's fetch service (FULLSEND_FETCH_URL, bearer
// token FULLSEND_FETCH_TOKEN, both injected by the runner) for a pinned
// forge skill directory and prints the sandbox directory it was put in.
func newFetchSkillCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "fetch-skill URL",
		Short: "Fetch a skill directory mid-run (inside the sandbox)",
		Long: `fetch-skill asks the runner for a skill directory the harness allows
(allow_runtime_fetch: true; the URL must match allowed_remote_resources,
be a forge tree URL and carry #sha256=<tree hash>). The runner verifies,
scans, caches and uploads it with its dependencies, then this command prints
the sandbox-local skill directory on stdout. Errors are one line on stderr,
exit status 1.

It reads FULLSEND_FETCH_URL and FULLSEND_FETCH_TOKEN from the environment.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := fetchsvc.ClientFromEnv(env.Getenv)
			if err != nil {
				return fmt.Errorf("fetch-skill: %w", err)
			}
			res, err := c.FetchSkill(cmd.Context(), args[0])
			var se *fetchsvc.ServiceError
			if errors.As(err, &se) {
				return fmt.Errorf("fetch-skill: %w", err) // the service names the URL
			}
			if err != nil {
				return fmt.Errorf("fetch-skill %s: %w", args[0], err)
			}
			_, err = fmt.Fprintln(env.Stdout, res.Path)
			return err
		},
	}
}
