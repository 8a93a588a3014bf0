package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newGraphCmd(env *Env) *cobra.Command {
	var f ResolveFlags
	var format string
	cmd := &cobra.Command{
		Use:   "graph [--format dot|mermaid] [--offline] [--forge NAME] HARNESS",
		Short: "Print a harness's dependency graph as Graphviz dot or Mermaid",
		Long: `graph resolves HARNESS like resolve does and prints its dependency graph:
local resources green, remote ones blue, edges labelled with the field that
references them.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "dot" && format != "mermaid" {
				return usageError{fmt.Errorf("--format %q: want dot or mermaid", format)}
			}
			res, err := env.ResolveHarness(cmd.Context(), cmd, args[0], f, true)
			if err != nil {
				return err
			}
			if format == "mermaid" {
				return res.Graph.WriteMermaid(env.Stdout)
			}
			return res.Graph.WriteDot(env.Stdout)
		},
	}
	f.add(cmd, true)
	env.addTrustFlags(cmd)
	cmd.Flags().StringVar(&format, "format", "dot", "output `FORMAT`: dot or mermaid")
	return cmd
}
