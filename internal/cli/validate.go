package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/harness"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/termsafe"
)

// validateJSON is the --json shape of validate.
type validateJSON struct {
	Harness   string             `json:"harness"`
	Root      string             `json:"root"`
	Forge     string             `json:"forge"`
	Forges    []string           `json:"forges"`
	Chain     []string           `json:"chain"`
	Valid     bool               `json:"valid"`
	Resources []validateResource `json:"resources"`
	Notices   []string           `json:"notices"`
	// NativeTools are the extra native-runtime tools the harness allows
	// (native.tools); omitted when none.
	NativeTools []string `json:"native_tools,omitempty"`
	// Description and Trigger are the harness's description: and trigger:.
	Description string `json:"description,omitempty"`
	Trigger     string `json:"trigger,omitempty"`
}

type validateResource struct {
	Field      string `json:"field"`
	Kind       string `json:"kind"`
	Ref        string `json:"ref"`
	Resolved   string `json:"resolved"`
	Location   string `json:"location"` // local | remote | runtime
	URL        string `json:"url,omitempty"`
	SHA256     string `json:"sha256,omitempty"`
	LocalPath  string `json:"local_path,omitempty"`
	Executable bool   `json:"executable"`
	Optional   bool   `json:"optional"`
	File       string `json:"file"`
	Line       int    `json:"line"`
}

func newValidateCmd(env *Env) *cobra.Command {
	var asJSON bool
	var forge, ciOutput string
	cmd := &cobra.Command{
		Use:   "validate [--json] [--forge NAME] [--ci-output KIND] HARNESS",
		Short: "Load and validate a harness and resolve its local references",
		Long: `validate loads HARNESS (a path, or the name of an agent registered in
config.yaml), composes its base: chain, applies the --forge overlay when
given, checks every rule (allowlists, pins, local-only executables, paths that
stay inside the fullsend dir, runtime names) and prints the harness's resources. Nothing is
fetched. Without --forge, the resources of every forge overlay are checked and
listed too (as forge.<name>.<field>).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, fg, optional, err := env.decideCI(forge, ciOutput)
			if err != nil {
				return err
			}
			h, cfg, t, err := env.loadHarness(cmd, args[0], fg, optional)
			if err != nil {
				return err
			}
			res, err := h.Check(cfg)
			if err != nil {
				return t.explainRoot(err)
			}
			// runtime: must name a registered runtime (script, native,
			// claude), in the harness and in config.yaml alike.
			if err := runpkg.CheckHarnessRuntime(h, cfg); err != nil {
				return err
			}
			out := validateJSON{
				Harness: t.Path, Root: t.Root, Forge: h.AppliedForge, Forges: nonNilStrings(h.ForgeNames()),
				Chain: h.Chain, Valid: true, Resources: []validateResource{}, Notices: nonNilStrings(h.Notices),
				NativeTools: h.Native.Tools, Description: h.Description, Trigger: h.Trigger,
			}
			for _, r := range res {
				out.Resources = append(out.Resources, validateDescribe(r, t.Root))
			}
			if asJSON {
				return writeJSON(env.Stdout, out)
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "FIELD\tKIND\tREF\tRESOLVED\tLOCAL/REMOTE")
			remote := 0
			for _, r := range out.Resources {
				if r.Location == "remote" {
					remote++
				}
				termsafe.Fprintf(tw, // references may come from remote content
					"%s\t%s\t%s\t%s\t%s\n", r.Field, r.Kind, r.Ref, r.Resolved, r.Location)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			what := relToRoot(t.Path, t.Root)
			if h.AppliedForge != "" {
				what += " (forge " + h.AppliedForge + ")"
			}
			if len(h.Native.Tools) > 0 {
				termsafe.Fprintf(env.Stdout, "native tools allowed: %s\n", strings.Join(h.Native.Tools, ", "))
			}
			termsafe.Fprintf(env.Stdout, "valid: %s: %d resources, %d remote\n", what, len(out.Resources), remote)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object instead of a table")
	cmd.Flags().StringVar(&forge, "forge", "", "apply the forge.`NAME` overlay (e.g. github, gitlab; default in CI: the CI's forge when the harness has that overlay)")
	addCIOutputFlag(cmd.Flags(), &ciOutput)
	env.addTrustFlags(cmd)
	// Every command that takes HARNESS takes --yes (the CLI contract). validate
	// never fetches, so there is nothing to confirm: a harness URL is checked
	// by resolve, which is where --yes matters.
	cmd.Flags().Bool("yes", false, "accepted for uniformity with the other HARNESS commands; validate never fetches anything")
	return cmd
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func validateDescribe(r harness.Resolved, root string) validateResource {
	v := validateResource{
		Field: r.Field, Kind: r.Kind.String(), Ref: r.Value, Executable: r.Executable,
		Optional: r.Optional, File: r.Pos.File, Line: r.Pos.Line,
	}
	switch {
	case r.EnvExpanded():
		v.Location = "runtime"
		v.Resolved = "(expanded at run time)"
	case r.Ref.IsRemote():
		v.Location = "remote"
		v.URL = r.Ref.URL
		v.SHA256 = string(r.Ref.Digest)
		v.Resolved = r.Ref.URL
	case r.Local == "":
		v.Location = "local"
		v.Resolved = "(optional, missing)"
	default:
		v.Location = "local"
		v.LocalPath = r.Local
		v.Resolved = relToRoot(r.Local, root)
	}
	return v
}

func relToRoot(p, root string) string {
	if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}
