package run

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/resolve"
	"github.com/fullsend-ai/fullsend/internal/rundir"
	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/scan"
	"github.com/fullsend-ai/fullsend/internal/trust"
)

// ReportVersion is the format version of report.json.
const ReportVersion = 1

// File names inside a run directory.
const (
	ReportFile     = "report.json"
	TranscriptFile = "transcript.jsonl" // from the runtime's TranscriptHandler, else the event log
	EventsFile     = "events.jsonl"     // normalised runtime events, written as they happen
	PreScriptLog   = "pre_script.log"
	PostScriptLog  = "post_script.log"
	FetchLog       = "fetch.log" // runtime fetch service requests
	OutputSubdir   = "output"    // the sandbox's OutputDir after the last iteration
)

// Run statuses.
const (
	StatusSucceeded = "succeeded" // agent succeeded and its result validated
	StatusFailed    = "failed"    // a phase failed (see Error)
	StatusBlocked   = "blocked"   // a security scan blocked the run (fail_mode closed)
	StatusInvalid   = "invalid"   // the agent ran but its result never validated
	StatusTimeout   = "timeout"   // the agent ran past timeout_minutes
	StatusCanceled  = "canceled"  // interrupted (Ctrl-C, SIGTERM)
	StatusRunning   = "running"   // report written before the run ended (crash)
	StatusSkipped   = "skipped"   // the pre_script asked not to run the agent (exit 0)
)

// Report is report.json: what a run did, for humans (`fullsend runs show`)
// and for tools.
type Report struct {
	Version    int       `json:"version"`
	RunID      string    `json:"run_id"`
	Status     string    `json:"status"`
	ExitCode   int       `json:"exit_code"`
	Error      string    `json:"error,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	DurationMS int64     `json:"duration_ms"`

	Harness   HarnessInfo `json:"harness"`
	GraphHash string      `json:"graph_hash"`
	Runtime   string      `json:"runtime"`
	Agent     string      `json:"agent"`
	Sandbox   SandboxInfo `json:"sandbox"`
	Target    TargetInfo  `json:"target"`

	Phases     []Phase         `json:"phases"`
	Events     EventSummary    `json:"events"`
	Findings   []FindingRecord `json:"findings"`
	Validation Validation      `json:"validation"`
	Outputs    []string        `json:"outputs,omitempty"` // files under output/, relative to the run dir
	Notes      []string        `json:"notes,omitempty"`
	// Review is set when security.escalation.on_critical: review let a
	// critical finding through (status review).
	Review *Review `json:"review,omitempty"`
	// Resumes counts `fullsend run --resume` continuations of this run
	// directory (native runtime); the earlier attempts' reports are kept as
	// report.attempt-N.json.
	Resumes int `json:"resumes,omitempty"`
	// SkipReason is the pre_script's reason when Status is skipped;
	// PrescriptOutputs are the other keys it wrote to
	// FULLSEND_PRESCRIPT_OUTPUT (package prescript).
	SkipReason       string            `json:"skip_reason,omitempty"`
	PrescriptOutputs map[string]string `json:"prescript_outputs,omitempty"`
	// CI is the CI system the run was started in and what it selected
	// (forge overlay, CI-native output); omitted outside CI.
	CI *CIInfo `json:"ci,omitempty"`
	// Capabilities is what the agent was given: tools, limits, backend,
	// model endpoint (never its key) and skills with digests.
	Capabilities *CapabilitySnapshot `json:"capabilities,omitempty"`
	// Trust is which layers the run trusted: the org layer, a repository
	// layer, a trusted ref, or the operator's --trust-worktree.
	Trust *trust.Info `json:"trust,omitempty"`
	// Anomalies are the run's fetches that differ from lock.yaml (new
	// host, new prefix, changed pin) or from the harness's recent runs
	// (more runtime fetches): see docs/closure.md.
	Anomalies []resolve.Anomaly `json:"anomalies,omitempty"`

	dir string
}

// CIInfo is report.json's "ci": the CI system detected (package ci) and
// what the run made of it.
type CIInfo struct {
	Platform   string `json:"platform"`              // github | gitlab | none
	DetectedBy string `json:"detected_by,omitempty"` // "GITHUB_ACTIONS=true"
	Output     string `json:"output"`                // CI-native output: github | gitlab | none
	// Forge is the overlay selected ("" = none) and ForgeFrom what
	// selected it: "--forge" or the detecting variable. The overlay that
	// was applied is harness.forge.
	Forge     string `json:"forge,omitempty"`
	ForgeFrom string `json:"forge_from,omitempty"`
}

// HarnessInfo identifies the harness that ran.
type HarnessInfo struct {
	Source string `json:"source"`
	SHA256 string `json:"sha256"`
	Forge  string `json:"forge,omitempty"`
}

// SandboxInfo names the backend and what it enforces.
type SandboxInfo struct {
	Backend      string               `json:"backend"`
	SessionID    string               `json:"session_id,omitempty"`
	Capabilities sandbox.Capabilities `json:"capabilities"`
	Network      []string             `json:"network_allow,omitempty"`
	Mounts       []sandbox.Mount      `json:"mounts,omitempty"`
	Image        string               `json:"image,omitempty"`
	// Limits are the resource limits in force (config sandbox.limits
	// lowered by the harness resources:).
	Limits config.Limits `json:"limits"`
}

// TargetInfo is the repository the agent worked on.
type TargetInfo struct {
	Repo     string   `json:"repo,omitempty"` // host path; "" = empty working directory
	Dir      string   `json:"dir"`            // sandbox working directory
	Injected []string `json:"injected,omitempty"`
	Shadowed []string `json:"shadowed_skills,omitempty"` // repo skills shadowed by fullsend skills
}

// Phase is one step of the run.
type Phase struct {
	Name       string  `json:"name"`
	Status     string  `json:"status"` // ok | failed | skipped
	DurationMS float64 `json:"duration_ms"`
	Error      string  `json:"error,omitempty"`
}

// EventSummary sums the runtime's normalised events over all iterations.
type EventSummary struct {
	Iterations   int     `json:"iterations"`
	Turns        int     `json:"turns"`
	ToolCalls    int     `json:"tool_calls"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	Errors       int     `json:"errors"`
	StopReason   string  `json:"stop_reason,omitempty"`
	AgentExit    int     `json:"agent_exit_code"`
	// RuntimeFetches counts budget slots the runtime fetch service used.
	RuntimeFetches int `json:"runtime_fetches,omitempty"`

	// Prompt-cache counts (part of InputTokens) when the model server
	// reports them.
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens,omitempty"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens,omitempty"`
}

// FindingRecord is one scan finding with the phase that produced it.
type FindingRecord struct {
	Phase    string `json:"phase"` // host_scan | scan_context | agent[N] (a verdict of a sandbox hook)
	Path     string `json:"path"`
	Scanner  string `json:"scanner"`
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
	Message  string `json:"message"`
	Blocked  bool   `json:"blocked"`
	// Accepted: a reviewer accepted this finding for these bytes
	// (scan-accept.yaml); it never blocks.
	Accepted *scan.Accepted `json:"accepted,omitempty"`
	// TraceID correlates the run's findings (security.trace.enabled).
	TraceID string `json:"trace_id,omitempty"`
}

// Validation is the validation loop's record.
type Validation struct {
	Schema        string      `json:"schema,omitempty"`
	Script        string      `json:"script,omitempty"`
	MaxIterations int         `json:"max_iterations"`
	Iterations    []Iteration `json:"iterations"`
	Valid         *bool       `json:"valid"`            // nil: nothing to validate (no result required)
	Result        string      `json:"result,omitempty"` // result file, relative to the run dir
}

// Iteration is one agent run and its validation.
type Iteration struct {
	N          int      `json:"n"`
	ExitCode   int      `json:"exit_code"`
	StopReason string   `json:"stop_reason,omitempty"`
	Valid      bool     `json:"valid"`
	Errors     []string `json:"errors,omitempty"`
	DurationMS float64  `json:"duration_ms"`
}

// Dir is the run directory the report belongs to.
func (r *Report) Dir() string { return r.dir }

// Succeeded reports whether the run succeeded (exit 0).
func (r *Report) Succeeded() bool { return r.Status == StatusSucceeded }

// RunsDir is where the run directories of a workspace live when the
// workspace is named (--workspace).
func RunsDir(workspace string) string { return filepath.Join(workspace, ".fullsend", "runs") }

// runsDir is where o's run directories live: Options.RunsDir, else
// RunsDir of the workspace.
func (o Options) runsDir() string {
	if o.RunsDir != "" {
		return o.RunsDir
	}
	return RunsDir(o.Workspace)
}

// NewRunID returns a sortable run id: UTC time to the millisecond and 6
// random hex digits ("20261121T200102.123Z-a1b2c3").
func NewRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(b[:])
}

// CheckRunID accepts what NewRunID produces (no path separators, no dots
// other than the millisecond one).
func CheckRunID(id string) error {
	if id == "" || len(id) > 64 || strings.ContainsAny(id, `/\`) || strings.Contains(id, "..") || id[0] == '.' {
		return fmt.Errorf("run id %q: not a run id", id)
	}
	return nil
}

// write saves the report atomically (temp file + rename, never through a
// symlink) as report.json.
func (r *Report) write() error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(r.dir, ReportFile), append(data, '\n'), 0o600)
}

// ErrNoRun is returned by Load for an unknown run id.
var ErrNoRun = errors.New("no such run")

// Load reads the report of run id under runsDir. The run directory is
// untrusted input: a symlinked directory or report.json, or one owned by
// another user, is refused (rundir.ErrUntrusted).
func Load(runsDir, id string) (*Report, error) {
	if err := CheckRunID(id); err != nil {
		return nil, err
	}
	dir := filepath.Join(runsDir, id)
	data, err := ReadRunFile(runsDir, id, ReportFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("run %s: %w (in %s)", id, ErrNoRun, runsDir)
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("run %s: %s: %w", id, ReportFile, err)
	}
	r.dir = dir
	return &r, nil
}

// ReadRunFile reads the file rel of run id under runsDir through package
// rundir: the runs directory and the run directory must be real
// directories of the user, and no symlink is followed.
func ReadRunFile(runsDir, id, rel string) ([]byte, error) {
	d, err := rundir.OpenRun(runsDir, id)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadFile(rel)
}

// List reads every run's report under runsDir, newest first. Directories
// without a readable report (or refused: see Load) are skipped.
func List(runsDir string) ([]*Report, error) {
	if err := rundir.CheckRunsDir(runsDir); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(runsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Report
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		r, err := Load(runsDir, e.Name())
		if err != nil {
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RunID > out[j].RunID })
	return out, nil
}
