package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/fullsend-ai/fullsend/internal/prescript"
)

// errSkipped ends a run whose pre_script asked for a skip: the run is
// reported skipped with exit status 0, and nothing after the pre_script
// (scan, sandbox, agent, post_script) happens.
var errSkipped = errors.New("skipped at the pre_script's request")

// preScript runs the harness's pre_script with FULLSEND_PRESCRIPT_OUTPUT
// naming an empty file in the run directory, then reads what the script
// wrote there (package prescript). skipped=true, or exit status 78, marks
// the run skipped with the script's reason; any other failure, and any
// malformed output, fails the run (never a silent proceed).
func (x *execution) preScript(ctx context.Context) error {
	p := x.plan
	out, err := prescript.Create(x.dir)
	if err != nil {
		return err
	}
	err = runHostScript(ctx, "pre_script", p.PreScript, filepath.Join(x.dir, PreScriptLog),
		x.scriptEnv(map[string]string{prescript.Env: out}), p.ScriptTimeout)
	var se *ScriptError
	neutral := errors.As(err, &se) && se.Err == nil && se.ExitCode == prescript.ExitSkip
	if err != nil && !neutral {
		return err
	}
	res, rerr := prescript.Read(out)
	switch {
	case rerr != nil && !neutral:
		return fmt.Errorf("pre_script %s: %w", p.PreScript, rerr)
	case rerr != nil:
		// Exit 78 is a skip whatever the file says; its reason is lost.
		x.warn(fmt.Sprintf("pre_script exited %d (skip); its output file is unreadable: %v", prescript.ExitSkip, rerr))
		res = prescript.Result{}
	}
	if len(res.Outputs) > 0 {
		x.report.PrescriptOutputs = res.Outputs
	}
	if !neutral && !res.Skipped {
		return nil
	}
	reason := res.Reason
	if reason == "" {
		reason = "the pre_script asked to skip the run (no reason given)"
		if neutral {
			reason = fmt.Sprintf("the pre_script exited %d (skip; no reason given)", prescript.ExitSkip)
		}
	}
	x.report.Status, x.report.SkipReason = StatusSkipped, reason
	x.note("skipped: " + reason)
	return nil
}
