package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/fullsend-ai/fullsend/internal/atomicfile"
	"github.com/fullsend-ai/fullsend/internal/ci"
	runpkg "github.com/fullsend-ai/fullsend/internal/run"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// The CI side of the CLI (package ci does the work): in GitHub Actions
// fullsend's stdout and stderr go through ci.Guard for every command, so no
// text it prints can become a workflow command; a command's error becomes
// an annotation when the CI output is github; run and validate take
// --ci-output and let a detected CI select the forge overlay.

// guardCI puts ci.Guard in front of stdout and stderr when the runner of
// GitHub Actions reads them (GITHUB_ACTIONS=true), whatever the flags say,
// and sets the default CI output (the detected platform).
func (e *Env) guardCI() {
	d := ci.Detect(e.Getenv)
	e.ciOutput = d.Platform
	if d.Platform != ci.GitHub {
		return
	}
	e.ciOut, e.ciErr = ci.NewGuard(e.Stdout), ci.NewGuard(e.Stderr)
	e.Stdout, e.Stderr = e.ciOut, e.ciErr
}

// flushCI writes what the guards still hold.
func (e *Env) flushCI() {
	for _, g := range []*ci.Guard{e.ciOut, e.ciErr} {
		if g != nil {
			_ = g.Flush()
		}
	}
}

// ciCommand writes a workflow command fullsend built on stderr (the
// runner reads both streams; stdout may carry --json).
func (e *Env) ciCommand(line string) {
	if e.ciErr != nil {
		_ = e.ciErr.Command(line)
		return
	}
	fmt.Fprintln(e.Stderr, line)
}

// addCIOutputFlag adds --ci-output to a command.
func addCIOutputFlag(fl *pflag.FlagSet, v *string) {
	fl.StringVar(v, "ci-output", "", "CI-native output `KIND`: github (annotations, job summary, step outputs), gitlab (code-quality report) or none (default: the CI detected from GITHUB_ACTIONS / GITLAB_CI)")
}

// decideCI combines the detected CI with --forge and --ci-output (an
// explicit flag wins), prints the choice as one note and makes it the
// command's CI output. It returns the forge overlay to apply and whether
// it is optional (selected by detection: applied only when the harness
// has it).
func (e *Env) decideCI(forgeFlag, outputFlag string) (ci.Choice, string, bool, error) {
	c, err := ci.Decide(ci.Detect(e.Getenv), forgeFlag, outputFlag)
	if err != nil {
		return c, "", false, usageError{err}
	}
	e.ciOutput = c.Output
	if line := c.Line(); line != "" {
		e.notef("%s", line)
	}
	return c, c.Forge, c.ForgeFrom != "--forge" && c.Forge != "", nil
}

// ciInfo is report.json's "ci" for a choice (nil outside CI without
// --ci-output).
func ciInfo(c ci.Choice) *runpkg.CIInfo {
	if c.Detected.Platform == ci.None && c.OutputFrom == "" {
		return nil
	}
	return &runpkg.CIInfo{
		Platform: string(c.Detected.Platform), DetectedBy: c.Detected.Var, Output: string(c.Output),
		Forge: c.Forge, ForgeFrom: c.ForgeFrom,
	}
}

// ciWorkspace is the directory annotation paths are relative to:
// $GITHUB_WORKSPACE (or $CI_PROJECT_DIR), else the current directory.
func (e *Env) ciWorkspace() string {
	for _, v := range []string{"GITHUB_WORKSPACE", "CI_PROJECT_DIR"} {
		if d := e.Getenv(v); d != "" {
			if abs, err := filepath.Abs(d); err == nil {
				return abs
			}
		}
	}
	wd, _ := os.Getwd()
	return wd
}

// annotateError turns a command's error into a GitHub annotation (with
// the file and line of a harness or config error) when the CI output is
// github.
func (e *Env) annotateError(err error) {
	if err == nil || e.ciOutput != ci.GitHub {
		return
	}
	a := ci.Annotation{Level: ci.LevelError, Title: "fullsend", Message: oneLine(err.Error())}
	var ye *yamlx.Error
	if errors.As(err, &ye) && ye.File != "" {
		a.File, a.Line = ye.File, ye.Line
		if rel, rerr := filepath.Rel(e.ciWorkspace(), ye.File); rerr == nil && filepath.IsLocal(rel) {
			a.File = filepath.ToSlash(rel)
		}
	}
	e.ciCommand(a.String())
}

// ciRunOutput writes a run's CI-native output: for github the findings
// and validation errors as annotations, the job summary appended to
// $GITHUB_STEP_SUMMARY and the step outputs appended to $GITHUB_OUTPUT
// (each when its variable is set); for gitlab the code-quality report
// gl-code-quality-report.json in the current directory. A CI file that
// cannot be written is an error (a workflow gate must not disagree with
// the run).
func (e *Env) ciRunOutput(rep *runpkg.Report, runErr error) error {
	if e.ciOutput != ci.GitHub && e.ciOutput != ci.GitLab {
		return nil
	}
	o := ci.Outcome{Report: rep, Err: runErr, Result: runResultPath(rep), Workspace: e.ciWorkspace()}
	o.Exit = exitCodeOf(runExit(rep, runErr))
	if e.ciOutput == ci.GitLab {
		data, err := o.CodeQuality()
		if err != nil {
			return err
		}
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		if err := atomicfile.Write(filepath.Join(wd, ci.CodeQualityFile), data, 0o644); err != nil {
			return fmt.Errorf("GitLab code-quality report: %w", err)
		}
		return nil
	}
	for _, a := range o.Annotations() {
		e.ciCommand(a.String())
	}
	if p := e.Getenv("GITHUB_STEP_SUMMARY"); p != "" {
		if err := ci.AppendFile("GITHUB_STEP_SUMMARY", p, o.Summary()); err != nil {
			return err
		}
	}
	if p := e.Getenv("GITHUB_OUTPUT"); p != "" {
		text, err := ci.FormatOutputs(o.Outputs())
		if err != nil {
			return err
		}
		if err := ci.AppendFile("GITHUB_OUTPUT", p, text); err != nil {
			return err
		}
	}
	return nil
}

// runResultPath is the host path of a run's result file, "" when there is
// none.
func runResultPath(rep *runpkg.Report) string {
	if rep == nil {
		return ""
	}
	res := filepath.Join(rep.Dir(), runpkg.OutputSubdir, runpkg.ResultName)
	if st, err := os.Stat(res); err == nil && st.Mode().IsRegular() {
		return res
	}
	return ""
}

// exitCodeOf is the exit status a command error leads to.
func exitCodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	var ue usageError
	switch {
	case errors.As(err, &ee):
		return ee.Code
	case errors.As(err, &ue):
		return ExitUsage
	}
	return ExitFailure
}
