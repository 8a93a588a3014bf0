package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/progress"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/rundir"
	"github.com/fullsend-ai/fullsend/internal/termsafe"
)

func newRunsCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List and show past runs (see fullsend run --help for where they live)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return usageError{errRunsUsage} },
	}
	cmd.AddCommand(newRunsLsCmd(env), newRunsShowCmd(env))
	return cmd
}

type runRow struct {
	RunID      string    `json:"run_id"`
	Status     string    `json:"status"`
	ExitCode   int       `json:"exit_code"`
	Harness    string    `json:"harness"`
	Agent      string    `json:"agent"`
	Runtime    string    `json:"runtime"`
	Sandbox    string    `json:"sandbox"`
	StartedAt  time.Time `json:"started_at"`
	DurationMS int64     `json:"duration_ms"`
	Dir        string    `json:"dir"`
}

func newRunsLsCmd(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls [--json]",
		Short: "List runs, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			runsDir, err := env.RunsDir()
			if err != nil {
				return err
			}
			reps, err := runpkg.List(runsDir)
			if err != nil {
				return fmt.Errorf("runs: %w", err)
			}
			rows := make([]runRow, 0, len(reps))
			for _, r := range reps {
				sanitizeReport(r)
				rows = append(rows, runRow{r.RunID, r.Status, r.ExitCode, r.Harness.Source, r.Agent, r.Runtime,
					r.Sandbox.Backend, r.StartedAt, r.DurationMS, r.Dir()})
			}
			if asJSON {
				return writeJSON(env.Stdout, rows)
			}
			if len(rows) == 0 {
				fmt.Fprintf(env.Stdout, "no runs in %s\n", runsDir)
				return nil
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN ID\tSTATUS\tHARNESS\tRUNTIME\tSANDBOX\tDURATION")
			for _, r := range rows {
				termsafe.Fprintf(tw, // cells come from the runs' reports
					"%s\t%s\t%s\t%s\t%s\t%s\n", r.RunID, r.Status, r.Harness, r.Runtime, r.Sandbox,
					time.Duration(r.DurationMS)*time.Millisecond)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the runs as a JSON array")
	return cmd
}

func newRunsShowCmd(env *Env) *cobra.Command {
	var asJSON, transcript bool
	cmd := &cobra.Command{
		Use:   "show [--json|--transcript] RUN_ID|PREFIX|latest",
		Short: "Show one run's summary (--json: its report.json; --transcript: its conversation)",
		Long: `show prints the summary, phases, events, findings and notes of one run
(--json: its report.json as written). The run is named by its id, by any
prefix of the id that only it has (an ambiguous prefix is a usage error
listing the candidates), or by "latest" (the newest run).

--transcript prints the conversation of a native-runtime run instead: each
message with its role, the assistant's turns with token counts and tool
calls, tool results cut to a few lines (the whole output stays in the run
directory). The transcript is checked as --resume checks it; its text,
written by the model and the sandbox, is sanitised for the terminal.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && transcript {
				return usageError{errors.New("--json and --transcript cannot be combined")}
			}
			dir, err := env.RunsDir()
			if err != nil {
				return err
			}
			id, err := findRun(dir, args[0])
			if err != nil {
				return err
			}
			r, err := runpkg.Load(dir, id)
			if err != nil {
				return err
			}
			if transcript {
				return showTranscript(env.Stdout, id, r)
			}
			if asJSON {
				// report.json as written, read again through package
				// rundir (never a symlink) and only when it is JSON.
				data, err := runpkg.ReadRunFile(dir, id, runpkg.ReportFile)
				if err != nil {
					return fmt.Errorf("run %s: %w", id, err)
				}
				if !json.Valid(data) {
					return fmt.Errorf("run %s: %s is not JSON", id, runpkg.ReportFile)
				}
				_, err = env.Stdout.Write(data)
				return err
			}
			sanitizeReport(r)
			cwd, _ := os.Getwd()
			writeRunSummary(env.Stdout, r, cwd)
			fmt.Fprintln(env.Stdout, "phases:")
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			for _, p := range r.Phases { // report text is untrusted: termsafe.Fprintf
				termsafe.Fprintf(tw, "  %s\t%s\t%.1f ms\t%s\n", p.Name, p.Status, p.DurationMS, oneLine(p.Error))
			}
			tw.Flush()
			e := r.Events
			termsafe.Fprintf(env.Stdout, "events:   %d iteration(s), %d turn(s), %d tool call(s), %d+%d tokens, $%.4f\n",
				e.Iterations, e.Turns, e.ToolCalls, e.InputTokens, e.OutputTokens, e.CostUSD)
			if e.CacheReadInputTokens > 0 || e.CacheCreationInputTokens > 0 {
				termsafe.Fprintf(env.Stdout, "cache:    %d input tokens read from the prompt cache, %d written to it\n",
					e.CacheReadInputTokens, e.CacheCreationInputTokens)
			}
			for _, f := range r.Findings {
				termsafe.Fprintf(env.Stdout, "finding:  [%s] %s %s:%d %s: %s\n", f.Phase, f.Severity, f.Path, f.Line, f.Rule, f.Message)
			}
			for _, n := range r.Notes {
				termsafe.Fprintf(env.Stdout, "note:     %s\n", n)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print report.json")
	cmd.Flags().BoolVar(&transcript, "transcript", false, "print the run's conversation (native runtime)")
	return cmd
}

// latestRun names the newest run wherever a RUN_ID is accepted.
const latestRun = "latest"

// findRun turns a RUN_ID argument into a run id: an exact id, "latest"
// (the newest run directory; ids sort by time), or a prefix only one run
// has. No match wraps runpkg.ErrNoRun (exit 1); an ambiguous prefix is a
// usage error listing the candidates (exit 2).
func findRun(runsDir, arg string) (string, error) {
	if arg == "" {
		return "", usageError{errors.New("empty run id")}
	}
	if err := rundir.CheckRunsDir(runsDir); err != nil {
		return "", err
	}
	if arg != latestRun {
		if err := runpkg.CheckRunID(arg); err != nil {
			return "", usageError{err}
		}
		if st, err := os.Lstat(filepath.Join(runsDir, arg)); err == nil && st.IsDir() {
			return arg, nil
		}
	}
	ents, err := os.ReadDir(runsDir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("runs %s: %w", runsDir, err)
	}
	var ids []string
	for _, e := range ents {
		// DirEntry.IsDir does not follow: a symlinked run is never chosen.
		if e.IsDir() && runpkg.CheckRunID(e.Name()) == nil {
			ids = append(ids, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(ids)))
	if arg == latestRun {
		if len(ids) == 0 {
			return "", fmt.Errorf("run latest: %w (no runs in %s)", runpkg.ErrNoRun, runsDir)
		}
		return ids[0], nil
	}
	var match []string
	for _, id := range ids {
		if strings.HasPrefix(id, arg) {
			match = append(match, id)
		}
	}
	switch len(match) {
	case 0:
		return "", fmt.Errorf("run %s: %w (in %s)", arg, runpkg.ErrNoRun, runsDir)
	case 1:
		return match[0], nil
	}
	shown := match
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("… %d more", len(match)-10))
	}
	return "", usageError{fmt.Errorf("run id prefix %q is ambiguous: %d runs match (%s)", arg, len(match), strings.Join(shown, ", "))}
}

// sanitizeReport passes every text field `runs ls` and `runs show` print
// through progress.Sanitize, the sanitizer of progress output: a run
// directory is untrusted input, and its report.json must not drive the
// terminal (escape sequences, carriage returns, bidi overrides).
func sanitizeReport(r *runpkg.Report) {
	for _, p := range []*string{&r.RunID, &r.Status, &r.Error, &r.Runtime, &r.Agent, &r.Harness.Source, &r.Harness.SHA256,
		&r.Sandbox.Backend, &r.Target.Repo, &r.Events.StopReason} {
		*p = progress.Sanitize(*p)
	}
	for i := range r.Phases {
		ph := &r.Phases[i]
		ph.Name, ph.Status, ph.Error = progress.Sanitize(ph.Name), progress.Sanitize(ph.Status), progress.Sanitize(ph.Error)
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		for _, p := range []*string{&f.Phase, &f.Path, &f.Scanner, &f.Rule, &f.Severity, &f.Message} {
			*p = progress.Sanitize(*p)
		}
	}
	for i := range r.Notes {
		r.Notes[i] = progress.Sanitize(r.Notes[i])
	}
}
