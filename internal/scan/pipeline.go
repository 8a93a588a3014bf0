package scan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/audit"
)

// Notices the pipeline adds to results.
const (
	NoticeMLOff             = "ML prompt-injection layer is off (security.llm_guard.url not set)"
	NoticeLocalInjectionOff = "context-injection scan is off for local content (security.scan.local.context_injection: false)"
)

// Pipeline runs every scanner over content under the policy of its origin.
// It is safe for concurrent use.
type Pipeline struct {
	failMode    string
	local       Policy
	remote      Policy
	unicode     Scanner
	injection   Scanner
	secrets     Scanner
	ssrf        Scanner
	ml          Scanner // nil when not configured
	notices     []string
	accept      *Acceptances
	findingsLog string
	now         func() time.Time
}

// New builds a pipeline. It fails on an unknown fail mode, a threshold
// outside [0,1], or when the secrets rule set cannot be loaded. Policies are
// tightened, never loosened: remote content always gets the context-injection
// scan, and a remote ML threshold below DefaultRemoteMLThreshold or below the
// local one is raised (with a notice).
func New(o Options) (*Pipeline, error) {
	p := &Pipeline{failMode: o.FailMode, local: o.Local, remote: o.Remote, now: time.Now}
	switch p.failMode {
	case "":
		p.failMode = FailClosed
	case FailClosed, FailOpen:
	default:
		return nil, fmt.Errorf("scan: fail mode %q: want %q or %q", o.FailMode, FailClosed, FailOpen)
	}
	p.notices = append(p.notices, o.Notices...)
	var err error
	if p.local.MLThreshold, err = threshold("local", p.local.MLThreshold, DefaultLocalMLThreshold); err != nil {
		return nil, err
	}
	if p.remote.MLThreshold, err = threshold("remote", p.remote.MLThreshold, DefaultRemoteMLThreshold); err != nil {
		return nil, err
	}
	floor := max(DefaultRemoteMLThreshold, p.local.MLThreshold)
	if p.remote.MLThreshold < floor {
		p.notices = append(p.notices, fmt.Sprintf("remote ML threshold %.2f raised to %.2f: remote content is never scanned less strictly than local content or the 0.95 floor", p.remote.MLThreshold, floor))
		p.remote.MLThreshold = floor
	}
	if !p.remote.ContextInjection {
		p.remote.ContextInjection = true // no opt-out for remote content
	}
	if !p.local.ContextInjection {
		p.notices = append(p.notices, NoticeLocalInjectionOff)
	}
	p.unicode = NewUnicodeScanner()
	p.injection = NewInjectionScanner()
	p.ssrf = NewSSRFScanner(o.AllowedPrivateNetworks)
	if p.secrets, err = NewSecretsScanner(); err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	if o.LLMGuard.URL == "" {
		p.notices = append(p.notices, NoticeMLOff)
	} else {
		token := ""
		if o.LLMGuard.TokenEnv != "" && o.Getenv != nil {
			token = o.Getenv(o.LLMGuard.TokenEnv)
		}
		p.ml = NewLLMGuardScanner(o.LLMGuard, token, p.local.MLThreshold, p.remote.MLThreshold, p.failMode)
	}
	p.findingsLog = o.FindingsLog
	p.accept = o.Accept
	return p, nil
}

func threshold(which string, v, def float64) (float64, error) {
	if v == 0 {
		return def, nil
	}
	if !(v > 0 && v <= 1) {
		return 0, fmt.Errorf("scan: %s ML threshold %v: want a number in (0, 1]", which, v)
	}
	return v, nil
}

// FailMode returns the effective fail mode.
func (p *Pipeline) FailMode() string { return p.failMode }

// Policy returns the effective policy for an origin.
func (p *Pipeline) Policy(o Origin) Policy {
	if o == Remote {
		return p.remote
	}
	return p.local
}

// Scan runs every scanner over content. A scanner error becomes a critical
// finding (a warning in open mode): a scan that could not run never passes
// silently. The error return is reserved for a cancelled context and for a
// findings log that cannot be written.
func (p *Pipeline) Scan(ctx context.Context, content []byte, m Meta) (*Result, error) {
	fs, _, err := p.runScanners(ctx, content, m, p.index(content), p.scanners(m))
	if err != nil {
		return nil, err
	}
	var hexsum string
	if len(fs) > 0 {
		sum := sha256.Sum256(content)
		hexsum = hex.EncodeToString(sum[:])
	}
	return p.finish(fs, hexsum, m)
}

// scanners lists the scanners content of m's origin gets, in report order.
func (p *Pipeline) scanners(m Meta) []Scanner {
	scanners := []Scanner{p.unicode}
	if p.Policy(m.Origin).ContextInjection {
		scanners = append(scanners, p.injection)
	}
	scanners = append(scanners, p.secrets, p.ssrf)
	if p.ml != nil {
		scanners = append(scanners, p.ml)
	}
	return scanners
}

// scanIndex is what one pass over a content finds for several scanners:
// the keywords of the secrets scanner, the anchors of the injection
// scanner, and the offsets of non-ASCII and control bytes.
type scanIndex struct {
	sec, inj []kwHit
	sp       *specialIndex
}

// index reads content once for the secrets, injection and unicode
// scanners; nil when they are not the package's own or content is too
// large for the index.
func (p *Pipeline) index(content []byte) *scanIndex {
	sec, secOK := p.secrets.(secretsScanner)
	_, injOK := p.injection.(injectionScanner)
	if !secOK || !injOK || len(content) > maxIndexed {
		return nil
	}
	ix := &scanIndex{sp: newSpecialIndex(content)}
	ix.sec, ix.inj = sec.e.kwIndex(content)
	return ix
}

// runScanners runs scanners over content (with its index, when not nil)
// and returns their findings, in scanner order. A scanner error becomes a
// finding (critical in closed mode) and sets failed; the error return is
// the context's.
func (p *Pipeline) runScanners(ctx context.Context, content []byte, m Meta, ix *scanIndex, scanners []Scanner) (out []Finding, failed bool, err error) {
	for _, s := range scanners {
		var fs []Finding
		var err error
		switch {
		case ix != nil && s == p.secrets:
			fs, err = p.secrets.(secretsScanner).scanHits(ctx, content, m, ix.sec)
		case ix != nil && s == p.injection:
			fs, err = injectionScanner{}.scanHits(ctx, content, m, ix.inj, ix.sp.cursor())
		case ix != nil && s == p.unicode:
			if _, ok := s.(unicodeScanner); ok {
				fs, err = unicodeScanner{}.scanSpecials(ctx, content, m, ix.sp.cursor())
			} else {
				fs, err = s.Scan(ctx, content, m)
			}
		default:
			fs, err = s.Scan(ctx, content, m)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, true, ctx.Err()
			}
			failed = true
			sev := Critical
			if p.failMode == FailOpen {
				sev = Warning
			}
			fs = []Finding{{Scanner: s.Name(), Rule: s.Name() + "/error", Severity: sev, Path: m.Path,
				Message: "scanner failed: " + err.Error()}}
		}
		out = append(out, fs...)
	}
	return out, failed, nil
}

// finish orders the findings of one content, marks them with the content's
// hash (hexsum) and its acceptances, decides whether they block and logs
// them.
func (p *Pipeline) finish(fs []Finding, hexsum string, m Meta) (*Result, error) {
	r := &Result{Notices: append([]string(nil), p.notices...), Findings: fs}
	sortFindings(r.Findings)
	for i := range r.Findings {
		r.Findings[i].SHA256 = hexsum
	}
	// Reviewed findings accepted for these exact bytes do not block: the
	// only place acceptances apply.
	applyAcceptances(p.accept, r.Findings)
	for _, f := range r.Findings {
		if f.Blocks() && p.failMode == FailClosed {
			r.Blocked = true
		}
	}
	if err := p.record(r.Findings, m, r.Blocked); err != nil {
		return r, err
	}
	return r, nil
}

// ScanFiles scans a set of files (e.g. a skill directory) in path order as
// one unit. Each finding's path is m.Path joined with the file name (a URL
// base gets "/name"). Notices appear once.
func (p *Pipeline) ScanFiles(ctx context.Context, files map[string][]byte, m Meta) (*Result, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	total := &Result{}
	seen := map[string]bool{}
	for _, n := range names {
		fm := m
		fm.Path = joinPath(m.Path, n)
		r, err := p.Scan(ctx, files[n], fm)
		if r != nil {
			total.Findings = append(total.Findings, r.Findings...)
			total.Blocked = total.Blocked || r.Blocked
			for _, s := range r.Notices {
				if !seen[s] {
					seen[s] = true
					total.Notices = append(total.Notices, s)
				}
			}
		}
		if err != nil {
			return total, err
		}
	}
	// The unit judged as one: deferrals to companion files (crossfile.go).
	r, err := p.CrossFile(ctx, files, total.Findings, m)
	if r != nil {
		total.Findings = append(total.Findings, r.Findings...)
		total.Blocked = total.Blocked || r.Blocked
	}
	if err != nil {
		return total, err
	}
	return total, nil
}

func joinPath(base, name string) string {
	switch {
	case base == "":
		return name
	case strings.Contains(base, "://"):
		return strings.TrimRight(base, "/") + "/" + name
	default:
		return filepath.Join(base, name)
	}
}

// FindingRecord is one line of the findings JSONL.
type FindingRecord struct {
	Time     time.Time `json:"time"`
	Origin   Origin    `json:"origin"`
	Kind     string    `json:"kind,omitempty"`
	FailMode string    `json:"fail_mode"`
	Blocked  bool      `json:"blocked"`
	Finding
}

// FindingsPath is where findings are logged for a cache directory: beside
// the audit log.
func FindingsPath(cacheDir string) string { return filepath.Join(cacheDir, "findings.jsonl") }

func (p *Pipeline) record(fs []Finding, m Meta, blocked bool) error {
	if p.findingsLog == "" {
		return nil
	}
	now := p.now().UTC()
	for _, f := range fs {
		rec := FindingRecord{Time: now, Origin: m.Origin, Kind: m.Kind, FailMode: p.failMode, Blocked: blocked, Finding: f}
		if err := audit.AppendJSONL(p.findingsLog, rec); err != nil {
			return fmt.Errorf("findings log: %w", err)
		}
	}
	return nil
}

// CrossFile judges the files of one unit (a skill directory; names are
// paths in the unit, findings' paths m.Path joined with them) together:
// a file that defers to a companion file is read with the companion's
// lines in place of its name (see crossFile). found are the findings the
// files already have on their own (companions with a critical one are not
// read again). It returns only the cross-file findings; nil when the
// origin's policy has the context-injection scan off.
func (p *Pipeline) CrossFile(ctx context.Context, files map[string][]byte, found []Finding, m Meta) (*Result, error) {
	if !p.Policy(m.Origin).ContextInjection {
		return nil, nil
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	skip := map[string]bool{}
	for _, f := range found {
		if f.Severity != Critical {
			continue
		}
		for _, n := range names {
			if f.Path == joinPath(m.Path, n) {
				skip[n] = true
			}
		}
	}
	fs, err := crossFile(ctx, files, names, skip, m)
	if err != nil {
		return nil, err
	}
	total := &Result{}
	for _, n := range names {
		var own []Finding
		fm := m
		fm.Path = joinPath(m.Path, n)
		for _, f := range fs {
			if f.Path == fm.Path {
				own = append(own, f)
			}
		}
		if len(own) == 0 {
			continue
		}
		sum := sha256.Sum256(files[n]) // acceptances name the deferring file's bytes
		r, err := p.finish(own, hex.EncodeToString(sum[:]), fm)
		if r != nil {
			total.Findings = append(total.Findings, r.Findings...)
			total.Blocked = total.Blocked || r.Blocked
		}
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
