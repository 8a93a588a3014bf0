package scan

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// Severity ranks a finding. Only Critical findings block (in closed mode).
type Severity int

const (
	Info     Severity = iota // worth knowing, never blocks
	Warning                  // suspicious; printed, never blocks
	Critical                 // blocks in fail_mode closed
)

var severityNames = [...]string{Info: "info", Warning: "warning", Critical: "critical"}

func (s Severity) String() string {
	if s >= Info && s <= Critical {
		return severityNames[s]
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// MarshalText encodes the severity as its lower-case name.
func (s Severity) MarshalText() ([]byte, error) {
	if s < Info || s > Critical {
		return nil, fmt.Errorf("severity %d: unknown", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText accepts the names produced by MarshalText.
func (s *Severity) UnmarshalText(b []byte) error {
	for i, n := range severityNames {
		if string(b) == n {
			*s = Severity(i)
			return nil
		}
	}
	return fmt.Errorf("severity %q: unknown", b)
}

// Origin says where scanned content came from; remote content gets the
// stricter policy.
type Origin int

const (
	Local  Origin = iota // org- or repo-controlled files on disk
	Remote               // anything fetched from a URL
)

func (o Origin) String() string {
	if o == Remote {
		return "remote"
	}
	return "local"
}

// MarshalText encodes the origin as "local" or "remote".
func (o Origin) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText accepts "local" and "remote".
func (o *Origin) UnmarshalText(b []byte) error {
	switch string(b) {
	case "local":
		*o = Local
	case "remote":
		*o = Remote
	default:
		return fmt.Errorf("origin %q: unknown", b)
	}
	return nil
}

// Meta describes the content handed to a scanner.
type Meta struct {
	Path   string // file path or URL, used in findings only
	Origin Origin
	// Kind is agent|skill|policy|schema|plugin|context|profile|provider|other.
	// It is recorded, not interpreted: every kind gets every scanner.
	Kind string
}

// Finding is one problem found in one piece of content. Line and Column are
// 1-based; Column counts runes (not bytes) from the start of the line. Both
// are 0 when the finding concerns the whole content (e.g. the ML layer).
// Excerpt shows the offending text with invisible and control runes written
// as <U+XXXX>; it never contains a whole secret.
type Finding struct {
	Scanner  string   `json:"scanner"`
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Path     string   `json:"path"`
	Line     int      `json:"line"`
	Column   int      `json:"column"`
	Message  string   `json:"message"`
	Excerpt  string   `json:"excerpt,omitempty"`
	// SHA256 is the hash of the scanned content the finding is in: what an
	// acceptance names (scan-accept.yaml).
	SHA256 string `json:"sha256,omitempty"`
	// Accepted is set when a reviewer accepted this rule for these exact
	// bytes: the finding keeps its severity and is reported, but never
	// blocks.
	Accepted *Accepted `json:"accepted,omitempty"`
}

// Accepted says who accepted a finding and why (from scan-accept.yaml).
type Accepted struct {
	Who    string `json:"who"`
	Reason string `json:"reason"`
}

// Blocks reports whether f blocks in fail mode closed: critical and not
// accepted.
func (f Finding) Blocks() bool { return f.Severity == Critical && f.Accepted == nil }

// Scanner inspects content. Implementations must be safe for concurrent use,
// must not modify content, and return findings in content order. An error
// means the scanner could not do its job (the pipeline turns it into a
// finding; it never silently passes).
type Scanner interface {
	Name() string
	Scan(ctx context.Context, content []byte, m Meta) ([]Finding, error)
}

// Policy is the per-origin scanning policy.
type Policy struct {
	// ContextInjection runs the context-injection scanner. Always true for
	// remote content, whatever the configuration says.
	ContextInjection bool
	// MLThreshold is the pass bar of the ML layer: the minimum confidence that
	// content is benign. Content passes only when 1-score >= MLThreshold,
	// where score is the classifier's injection score in [0,1]. Higher is
	// stricter. See the package doc.
	MLThreshold float64
}

// Default per-origin policies (seed 000 §7).
const (
	DefaultLocalMLThreshold  = 0.92
	DefaultRemoteMLThreshold = 0.95
	DefaultLLMGuardTimeout   = 10 * time.Second
)

// Fail modes.
const (
	FailClosed = "closed" // critical findings block (default)
	FailOpen   = "open"   // critical findings are reported as warnings
)

// LLMGuard configures the optional ML layer (an LLM Guard API server).
type LLMGuard struct {
	URL      string        // base URL; "" = ML layer off (with a notice)
	TokenEnv string        // env var holding the bearer token; "" = no token
	Timeout  time.Duration // per request; 0 = DefaultLLMGuardTimeout
}

// Options configures a Pipeline. Start from DefaultOptions (or
// OptionsFromConfig): in a zero Options, Local.ContextInjection is false,
// which turns the local context-injection scan off. Zero thresholds mean the
// defaults; remote content always gets the context-injection scan.
type Options struct {
	FailMode string // "closed" (default when "") or "open"
	Local    Policy
	Remote   Policy
	LLMGuard LLMGuard
	// AllowedPrivateNetworks are ranges the ssrf-in-content scanner ignores
	// (the org's security.remote_resources.allowed_private_networks).
	AllowedPrivateNetworks []netip.Prefix
	// FindingsLog is the JSONL file every finding is appended to; "" = none.
	FindingsLog string
	// Getenv reads the LLM Guard token; nil = no environment.
	Getenv func(string) string
	// Notices are carried into every Result (e.g. from OptionsFromConfig).
	Notices []string
	// Accept holds the reviewed findings accepted in the fullsend dir's
	// scan-accept.yaml (nil: none). See Acceptance.
	Accept *Acceptances
}

// DefaultOptions is the policy without any configuration: fail mode closed,
// context injection on for both origins, thresholds 0.92 (local) and 0.95
// (remote), no ML layer, no private network exempted, no findings log.
func DefaultOptions() Options {
	return Options{
		FailMode: FailClosed,
		Local:    Policy{ContextInjection: true, MLThreshold: DefaultLocalMLThreshold},
		Remote:   Policy{ContextInjection: true, MLThreshold: DefaultRemoteMLThreshold},
	}
}

// Result is the outcome of scanning one piece (or one set) of content.
type Result struct {
	Findings []Finding `json:"findings"`
	Notices  []string  `json:"notices"`
	// Blocked is true when fail mode is closed and a critical finding that
	// is not accepted exists.
	Blocked bool `json:"blocked"`
}

// ErrBlocked is returned (wrapped) by (*Result).Err when content is blocked.
var ErrBlocked = errors.New("blocked by security scan")

// Critical returns the critical findings.
func (r *Result) Critical() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity == Critical {
			out = append(out, f)
		}
	}
	return out
}

// Blocking returns the findings that block in fail mode closed: the
// critical ones that are not accepted.
func (r *Result) Blocking() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Blocks() {
			out = append(out, f)
		}
	}
	return out
}

// Err returns nil unless the result is blocked; then an error wrapping
// ErrBlocked that names the first blocking finding and how many there are.
func (r *Result) Err() error {
	if r == nil || !r.Blocked {
		return nil
	}
	c := r.Blocking()
	if len(c) == 0 {
		return ErrBlocked
	}
	f := c[0]
	loc := f.Path
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", f.Path, f.Line, f.Column)
	}
	more := ""
	if len(c) > 1 {
		more = fmt.Sprintf(" (and %d more critical findings)", len(c)-1)
	}
	return fmt.Errorf("%s: %s: %s%s: %w", loc, f.Rule, f.Message, more, ErrBlocked)
}
