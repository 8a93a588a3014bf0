package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/event"
	"github.com/fullsend-ai/fullsend/internal/termsafe"
)

// dispatchJSON is the --json shape of dispatch.
type dispatchJSON struct {
	Event     string            `json:"event"`
	Harnesses []dispatchHarness `json:"harnesses"`
}

type dispatchHarness struct {
	Name        string `json:"name"`
	Harness     string `json:"harness"`
	Description string `json:"description,omitempty"`
	Trigger     string `json:"trigger,omitempty"`
	Triggered   bool   `json:"triggered"`
}

// dispatchMatrix is the --matrix shape: a GitHub Actions matrix with one
// entry per triggered harness.
type dispatchMatrix struct {
	Include []dispatchMatrixEntry `json:"include"`
}

type dispatchMatrixEntry struct {
	Name    string `json:"name"`
	Harness string `json:"harness"`
}

func newDispatchCmd(env *Env) *cobra.Command {
	var eventFile, dir string
	var asJSON, matrix bool
	cmd := &cobra.Command{
		Use:   "dispatch --event FILE [--json|--matrix] [HARNESS…|--dir DIR]",
		Short: "Print which harnesses an event triggers (their trigger: expressions)",
		Long: `dispatch reads an event (JSON, see docs/upstream-schema.md), loads each
HARNESS (or every *.yaml and *.yml file of --dir DIR but *.script.yaml,
default the harness/ directory of the fullsend dir) with validate's checks, and evaluates each
harness's trigger: CEL expression against the event. It prints the harnesses
the event triggers; a harness without trigger: is never triggered. --json
lists every harness with "triggered"; --matrix prints a GitHub Actions
matrix ({"include":[{"name":…,"harness":…}]}) of the triggered ones.
A harness that does not load, or an evaluation error, is exit 1.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if eventFile == "" {
				return usageError{errors.New("--event FILE is required")}
			}
			if asJSON && matrix {
				return usageError{errors.New("--json and --matrix: choose one")}
			}
			if dir != "" && len(args) > 0 {
				return usageError{errors.New("give HARNESS arguments or --dir, not both")}
			}
			ev, err := event.ReadFile(eventFile)
			if err != nil {
				return err
			}
			files := args
			if len(files) == 0 {
				if files, err = dispatchDir(env, dir); err != nil {
					return err
				}
			}
			out := dispatchJSON{Event: eventFile, Harnesses: []dispatchHarness{}}
			mx := dispatchMatrix{Include: []dispatchMatrixEntry{}}
			for _, f := range files {
				h, _, _, err := env.loadHarness(cmd, f, "", false)
				if err != nil {
					return err
				}
				name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
				d := dispatchHarness{Name: name, Harness: f, Description: h.Description, Trigger: h.Trigger}
				if h.Trigger != "" {
					p, err := event.Compile(h.Trigger)
					if err != nil { // checked at load; kept for safety
						return fmt.Errorf("harness %s: trigger: %w", f, err)
					}
					if d.Triggered, err = p.Match(ev); err != nil {
						pos := h.Pos("trigger", "")
						return fmt.Errorf("%s:%d: trigger: %w", pos.File, pos.Line, err)
					}
				}
				out.Harnesses = append(out.Harnesses, d)
				if d.Triggered {
					mx.Include = append(mx.Include, dispatchMatrixEntry{Name: name, Harness: f})
				}
			}
			switch {
			case asJSON:
				return writeJSON(env.Stdout, out)
			case matrix:
				b, err := json.Marshal(mx)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(env.Stdout, "%s\n", b)
				return err
			}
			for _, m := range mx.Include {
				termsafe.Fprintf(env.Stdout, "%s\t%s\n", m.Name, m.Harness)
			}
			if len(mx.Include) == 0 {
				env.notef("the event triggers none of %d harness(es)", len(files))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&eventFile, "event", "", "the event `FILE` (JSON)")
	cmd.Flags().StringVar(&dir, "dir", "", "evaluate every harness file of `DIR` (default: harness/ of the fullsend dir)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print every harness with whether the event triggers it, as JSON")
	cmd.Flags().BoolVar(&matrix, "matrix", false, "print a GitHub Actions matrix of the triggered harnesses")
	env.addTrustFlags(cmd)
	return cmd
}

// dispatchDir lists the harness files of dir (default: harness/ of the
// fullsend dir), sorted; script-runtime files (*.script.yaml) are not
// harnesses.
func dispatchDir(env *Env, dir string) ([]string, error) {
	if dir == "" {
		dir = filepath.Join(env.FullsendDir, "harness")
	}
	ents, err := os.ReadDir(dir)
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if err != nil {
		return nil, fmt.Errorf("dispatch --dir %s: %w", dir, err)
	}
	var out []string
	for _, e := range ents {
		// H.script.yaml beside a harness is the script runtime's file.
		if strings.HasSuffix(e.Name(), ".script.yaml") || strings.HasSuffix(e.Name(), ".script.yml") {
			continue
		}
		if ext := filepath.Ext(e.Name()); e.Type().IsRegular() && (ext == ".yaml" || ext == ".yml") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("dispatch --dir %s: no harness files (*.yaml, *.yml)", dir)
	}
	slices.Sort(out)
	return out, nil
}
