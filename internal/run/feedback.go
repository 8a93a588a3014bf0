package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// What a failed validation feeds back to the agent's next iteration
// (validation_loop.feedback_mode). Schema errors (fullsend's own check of
// the result) are fed back in every mode but none; the modes choose what
// of the validation script's run follows them:
//
//	""        (default) its exit status and the last feedbackLines lines of
//	          its combined stdout and stderr;
//	stdout    its exit status and the last lines of its stdout only;
//	stderr    its exit status and the last lines of its stderr only;
//	exit_code its exit status only (its output stays in the run dir's log);
//	append    the default feedback, with that of every earlier failed
//	          iteration before it, each headed "iteration N:";
//	none      nothing: the next iteration gets the prompt unchanged.
//
// The report records the default text of every iteration whatever the
// mode; the mode only changes what the agent is told.
const (
	FeedbackStdout   = "stdout"
	FeedbackStderr   = "stderr"
	FeedbackExitCode = "exit_code"
	FeedbackAppend   = "append"
	FeedbackNone     = "none"
)

// feedbackLines is how many trailing lines of script output are fed back.
const feedbackLines = 20

// maxStreamTail bounds the part of one output stream kept for feedback.
const maxStreamTail = 64 << 10

// tailBuffer keeps the last maxStreamTail bytes written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - maxStreamTail; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// scriptRun is one run of the validation script: err is runHostScript's
// (nil: exit 0); combined is the tail of its log, stdout and stderr those
// of each stream.
type scriptRun struct {
	err                      error
	combined, stdout, stderr []byte
}

// runValidationScript runs the validation script with its streams kept
// apart for feedback_mode; the error is for a canceled run only.
func runValidationScript(ctx context.Context, script, log string, env map[string]string, p *Plan) (*scriptRun, error) {
	var out, errb tailBuffer
	err := runHostScriptTee(ctx, "validation_loop.script", script, log, env, p.ScriptTimeout, &out, &errb)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	tail, _ := readBounded(log, 1<<20)
	return &scriptRun{err: err, combined: tail, stdout: out.b, stderr: errb.b}, nil
}

// status is how the script ended, as the feedback states it.
func (s *scriptRun) status() string {
	var se *ScriptError
	if errors.As(s.err, &se) && se.Err == nil {
		return fmt.Sprintf("exited with status %d", se.ExitCode)
	}
	return s.err.Error()
}

// reportLine is the script's failure as the report records it (and the
// default feedback).
func (s *scriptRun) reportLine() string {
	return fmt.Sprintf("validation script: %v: %s", s.err, lastLines(s.combined, feedbackLines))
}

// feedbackLine is the script's failure as mode feeds it back.
func (s *scriptRun) feedbackLine(mode string) string {
	switch mode {
	case FeedbackStdout:
		return fmt.Sprintf("validation script %s; its stdout:\n%s", s.status(), lastLines(s.stdout, feedbackLines))
	case FeedbackStderr:
		return fmt.Sprintf("validation script %s; its stderr:\n%s", s.status(), lastLines(s.stderr, feedbackLines))
	case FeedbackExitCode:
		return "validation script " + s.status()
	}
	return s.reportLine()
}

// nextFeedback is the feedback of failed iteration i for the next one:
// schemaErrs are the result's schema errors, script the validation
// script's run (nil when it did not run or passed), prev the feedback
// iteration i got.
func nextFeedback(mode string, i int, schemaErrs []string, script *scriptRun, prev string) string {
	if mode == FeedbackNone {
		return ""
	}
	lines := append([]string(nil), schemaErrs...)
	if script != nil && script.err != nil {
		lines = append(lines, script.feedbackLine(mode))
	}
	cur := strings.Join(lines, "\n")
	if mode != FeedbackAppend {
		return cur
	}
	var b bytes.Buffer
	if prev != "" {
		b.WriteString(prev)
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "iteration %d:\n%s", i, cur)
	return b.String()
}
