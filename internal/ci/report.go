package ci

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/run"
)

// Outcome is what CI output is made from: the run's report (nil when the
// command failed before a run existed) and what the command knows beside
// it.
type Outcome struct {
	Report *run.Report
	Err    error  // the command's error (nil on success and on skip)
	Exit   int    // the command's exit status
	Result string // host path of the agent's result file; "" = none
	// Workspace is the directory annotation paths are relative to
	// ($GITHUB_WORKSPACE; default the current directory).
	Workspace string
}

// status is the run's status, or "error" when there is no run.
func (o Outcome) status() string {
	if o.Report == nil {
		return "error"
	}
	return o.Report.Status
}

// Outputs are the step outputs of a run (the action's outputs): status,
// run-id, result, findings, skipped, skip-reason, exit-code, run-dir,
// review-label (the label to apply when the run's status is review).
// skipped is "true" or "false" once the run got past its skip decision
// and empty when it failed before (as upstream's relay).
func (o Outcome) Outputs() []Output {
	r := o.Report
	outs := []Output{{"status", o.status()}, {"exit-code", strconv.Itoa(o.Exit)}}
	if r == nil {
		return append(outs, Output{"run-id", ""}, Output{"run-dir", ""}, Output{"result", ""}, Output{"findings", "0"},
			Output{"skipped", ""}, Output{"skip-reason", ""}, Output{"review-label", ""})
	}
	skipped := ""
	switch {
	case r.Status == run.StatusSkipped:
		skipped = "true"
	case pastSkipDecision(r):
		skipped = "false"
	}
	review := ""
	if r.Review != nil {
		review = r.Review.Label
	}
	return append(outs, Output{"run-id", r.RunID}, Output{"run-dir", r.Dir()}, Output{"result", o.Result},
		Output{"findings", strconv.Itoa(len(r.Findings))}, Output{"skipped", skipped}, Output{"skip-reason", r.SkipReason},
		Output{"review-label", review})
}

// pastSkipDecision: the run reached the point where a pre_script could
// have skipped it (a pre_script ran and was ok, or the run went on to the
// stage phase).
func pastSkipDecision(r *run.Report) bool {
	for _, p := range r.Phases {
		if (p.Name == "pre_script" && p.Status == "ok") || p.Name == "stage" {
			return true
		}
	}
	return false
}

// Annotations are the run's GitHub annotations: one per finding (error
// when it blocked or is critical, warning, notice for info) and one per
// error of the last failed validation. The command's own error is
// annotated by the caller (ErrorAnnotation).
func (o Outcome) Annotations() []Annotation {
	r := o.Report
	if r == nil {
		return nil
	}
	var out []Annotation
	prefix := o.repoPrefix()
	for _, f := range r.Findings {
		level := LevelNotice
		switch {
		case f.Blocked || f.Severity == "critical" && f.Accepted == nil:
			level = LevelError
		case f.Severity == "warning" || f.Severity == "critical":
			level = LevelWarning
		}
		title := "fullsend " + f.Scanner + ": " + f.Rule
		if f.Blocked {
			title += " (blocked the run)"
		} else if f.Accepted != nil {
			title += " (accepted)"
		}
		a := Annotation{Level: level, Title: title, Message: f.Message}
		if f.Path != "" {
			a.File, a.Line, a.Col = joinRel(prefix, f.Path), f.Line, f.Column
		}
		out = append(out, a)
	}
	v := r.Validation
	if v.Valid != nil && !*v.Valid && len(v.Iterations) > 0 {
		last := v.Iterations[len(v.Iterations)-1]
		file := ""
		if v.Result != "" {
			file = o.rel(filepath.Join(r.Dir(), v.Result))
		}
		for _, e := range last.Errors {
			out = append(out, Annotation{Level: LevelError, File: file, Title: fmt.Sprintf("fullsend: result invalid (iteration %d)", last.N), Message: e})
		}
	}
	return out
}

// repoPrefix is the target repository's path inside the workspace ("" when
// it is the workspace itself or outside it): findings' paths are relative
// to the repository.
func (o Outcome) repoPrefix() string {
	if o.Report == nil || o.Report.Target.Repo == "" {
		return ""
	}
	rel := o.rel(o.Report.Target.Repo)
	if rel == "." || filepath.IsAbs(rel) {
		return ""
	}
	return rel
}

// rel makes p relative to the workspace when it is inside it.
func (o Outcome) rel(p string) string {
	if o.Workspace == "" {
		return p
	}
	rel, err := filepath.Rel(o.Workspace, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return filepath.ToSlash(rel)
}

func joinRel(prefix, p string) string {
	if prefix == "" || filepath.IsAbs(p) {
		return p
	}
	return prefix + "/" + p
}

var statusIcon = map[string]string{
	run.StatusSucceeded: "✅", run.StatusSkipped: "⏭️", run.StatusFailed: "❌", run.StatusBlocked: "⛔",
	run.StatusInvalid: "❌", run.StatusTimeout: "⏱️", run.StatusCanceled: "🛑", "error": "❌",
}

// Summary is the Markdown job summary of a run, for $GITHUB_STEP_SUMMARY:
// status, harness, phases with durations, findings, usage, result. Every
// value that comes from outside fullsend (messages, paths, reasons, the
// error) is escaped by Cell, so it renders as text.
func (o Outcome) Summary() string {
	var b strings.Builder
	r := o.Report
	st := o.status()
	if r == nil {
		fmt.Fprintf(&b, "### %s fullsend run: %s\n\n", statusIcon[st], st)
		if o.Err != nil {
			fmt.Fprintf(&b, "%s\n\n", Cell(o.Err.Error()))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "### %s fullsend run %s: %s\n\n", icon(st), Cell(r.RunID), st)
	b.WriteString("| | |\n|---|---|\n")
	row := func(k, v string) { fmt.Fprintf(&b, "| %s | %s |\n", k, v) }
	if r.Status == run.StatusSkipped {
		row("skipped", Cell(r.SkipReason))
	}
	if r.Error != "" {
		row("error", Cell(r.Error))
	}
	row("harness", Cell(r.Harness.Source))
	if r.Harness.Forge != "" {
		row("forge overlay", Cell(r.Harness.Forge))
	}
	row("agent", Cell(r.Agent))
	row("runtime / sandbox", Cell(r.Runtime)+" / "+Cell(r.Sandbox.Backend))
	switch v := r.Validation; {
	case v.Valid != nil && *v.Valid:
		row("result", fmt.Sprintf("valid (iteration %d of %d): %s", len(v.Iterations), v.MaxIterations, Cell(o.Result)))
	case v.Valid != nil:
		row("result", fmt.Sprintf("invalid after %d iteration(s)", len(v.Iterations)))
	case o.Result != "":
		row("result", Cell(o.Result))
	default:
		row("result", "none")
	}
	if e := r.Events; e.Turns > 0 || e.InputTokens > 0 {
		u := fmt.Sprintf("%d turn(s), %d tool call(s), %d input / %d output tokens", e.Turns, e.ToolCalls, e.InputTokens, e.OutputTokens)
		if e.CostUSD > 0 {
			u += fmt.Sprintf(", $%.4f", e.CostUSD)
		}
		row("usage", u)
	}
	row("duration", (time.Duration(r.DurationMS) * time.Millisecond).String())
	row("run dir", Cell(r.Dir()))
	if len(r.Phases) > 0 {
		b.WriteString("\n#### Phases\n\n| phase | status | duration |\n|---|---|---:|\n")
		for _, p := range r.Phases {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", Cell(p.Name), Cell(p.Status), phaseDuration(p.DurationMS))
		}
	}
	if len(r.Findings) > 0 {
		fmt.Fprintf(&b, "\n#### Findings (%d)\n\n| severity | rule | location | message | blocked |\n|---|---|---|---|---|\n", len(r.Findings))
		for _, f := range r.Findings {
			loc := f.Path
			if f.Line > 0 {
				loc += ":" + strconv.Itoa(f.Line)
			}
			blocked := "no"
			if f.Blocked {
				blocked = "**yes**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", Cell(f.Severity), Cell(f.Scanner+"/"+f.Rule), Cell(loc), Cell(f.Message), blocked)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// phaseDuration shows a phase's duration: milliseconds with one decimal
// below a second, else seconds to the hundredth.
func phaseDuration(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.2f s", ms/1000)
}

func icon(status string) string {
	if i, ok := statusIcon[status]; ok {
		return i
	}
	return "•"
}

// MaxCell bounds one escaped value in the job summary.
const MaxCell = 400

// Cell makes untrusted text safe inside a Markdown table cell: one line
// (CR, LF and other control characters become spaces), at most MaxCell
// runes, HTML special characters as entities (no tags, no comments) and
// every ASCII punctuation character Markdown gives meaning to
// backslash-escaped (no links, images, emphasis, code spans or table
// pipes), "@" as an entity (no mentions). Its result is for table cells
// and plain paragraphs, never inside a code span (where a backslash
// escapes nothing).
func Cell(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	n := 0
	for _, c := range s {
		if n == MaxCell {
			b.WriteString("…")
			break
		}
		n++
		switch {
		case c < 0x20 || c == 0x7f || c == '\u2028' || c == '\u2029':
			b.WriteByte(' ')
		case c == '&':
			b.WriteString("&amp;")
		case c == '<':
			b.WriteString("&lt;")
		case c == '>':
			b.WriteString("&gt;")
		case c == '"':
			b.WriteString("&quot;")
		case c == '@':
			b.WriteString("&#64;")
		case strings.ContainsRune("\\`*_{}[]()#+-.!|~:'=$%^", c):
			b.WriteByte('\\')
			b.WriteRune(c)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// codeQualityIssue is one entry of GitLab's code-quality report (the
// Code Climate subset GitLab reads).
type codeQualityIssue struct {
	Description string              `json:"description"`
	CheckName   string              `json:"check_name"`
	Fingerprint string              `json:"fingerprint"`
	Severity    string              `json:"severity"` // info | minor | major | critical | blocker
	Location    codeQualityLocation `json:"location"`
}

type codeQualityLocation struct {
	Path  string           `json:"path"`
	Lines codeQualityLines `json:"lines"`
}

type codeQualityLines struct {
	Begin int `json:"begin"`
}

// CodeQuality is GitLab's code-quality report (a JSON array) of the run's
// findings and validation errors: paths relative to the workspace
// ($CI_PROJECT_DIR), severities blocker (blocked the run), critical,
// minor (warning) and info. It is "[]" when there is nothing to report,
// so the artifact always exists.
func (o Outcome) CodeQuality() ([]byte, error) {
	issues := []codeQualityIssue{}
	sev := map[string]string{LevelError: "critical", LevelWarning: "minor", LevelNotice: "info"}
	for _, a := range o.Annotations() {
		s := sev[a.Level]
		if strings.HasSuffix(a.Title, "(blocked the run)") {
			s = "blocker"
		}
		line := a.Line
		if line < 1 {
			line = 1
		}
		path := a.File
		if path == "" {
			path = "."
		}
		h := sha256.Sum256([]byte(a.Title + "\x00" + path + "\x00" + strconv.Itoa(line) + "\x00" + a.Message))
		issues = append(issues, codeQualityIssue{
			Description: a.Title + ": " + a.Message, CheckName: a.Title, Fingerprint: hex.EncodeToString(h[:16]),
			Severity: s, Location: codeQualityLocation{Path: path, Lines: codeQualityLines{Begin: line}},
		})
	}
	data, err := json.MarshalIndent(issues, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// CodeQualityFile is the report's file name in the workspace (the name
// GitLab's documentation uses for artifacts:reports:codequality).
const CodeQualityFile = "gl-code-quality-report.json"
