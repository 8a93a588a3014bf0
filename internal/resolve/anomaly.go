package resolve

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/audit"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/lock"
)

// Anomaly kinds: how a run's fetches differ from what lock.yaml recorded
// for its harness (seed 000: "anomalous fetch patterns trigger alerts").
const (
	// AnomalyNewHost: a remote resource on a host no locked URL names.
	AnomalyNewHost = "new_host"
	// AnomalyNewPrefix: a known host, but a repository prefix
	// (forge.RepoPrefix) no locked URL is under.
	AnomalyNewPrefix = "new_prefix"
	// AnomalyChangedPin: a locked resource (same URL, or the same
	// repository path at another commit) with another sha256.
	AnomalyChangedPin = "changed_pin"
	// AnomalyRuntimeFetches: more runtime fetches than the most of the
	// harness's recent runs (package run).
	AnomalyRuntimeFetches = "runtime_fetches"
)

// ErrAnomalousFetch is the error of an anomalous fetch with Frozen (and of
// a run that fails on one: package run).
var ErrAnomalousFetch = errors.New("anomalous fetch")

// Anomaly is one fetch that differs from the lock file.
type Anomaly struct {
	Kind   string `json:"kind"`
	URL    string `json:"url,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Field  string `json:"field,omitempty"`
	// Locked is what lock.yaml has instead (the pin, or the URL of the
	// same resource); "" for a new host or prefix.
	Locked string `json:"locked,omitempty"`
	Detail string `json:"detail"`
}

// String is the one line an anomaly is reported as.
func (a Anomaly) String() string { return "anomalous fetch: " + a.Kind + ": " + a.Detail }

// anomalies compares the remote resources of res with the lock entry of
// its harness. Without a lock entry there is nothing to compare (a
// missing entry is checkLock's business).
func (r *resolver) anomalies(res *Result) []Anomaly {
	if r.o.Lock == nil || res.Graph == nil {
		return nil
	}
	_, entry := r.o.Lock.Find(res.Source)
	if entry == nil {
		return nil
	}
	pins := entry.Pins()
	hosts := map[string]bool{}
	prefixes := map[string]bool{}
	byPath := map[string][]lockedAt{}
	var walk func(ds []lock.Dep)
	walk = func(ds []lock.Dep) {
		for _, d := range ds {
			if d.URL != "" {
				hosts[urlHost(d.URL)] = true
				prefixes[forge.RepoPrefix(d.URL, r.cfg.Forges)] = true
				k := r.repoPath(d.URL)
				byPath[k] = append(byPath[k], lockedAt{url: d.URL, sha: d.SHA256})
			}
			walk(d.TransitiveDeps)
		}
	}
	for _, g := range entry.Dependencies {
		walk(g.Deps)
	}
	var out []Anomaly
	for _, n := range res.Graph.Nodes {
		if !n.Remote {
			continue
		}
		a := Anomaly{URL: n.URL, SHA256: string(n.SHA256), Field: n.Field}
		if got, ok := pins[n.URL]; ok {
			if slices.Contains(got, string(n.SHA256)) {
				continue
			}
			a.Kind, a.Locked = AnomalyChangedPin, strings.Join(got, ", ")
			a.Detail = fmt.Sprintf("%s (%s) resolved to sha256 %s, lock.yaml has %s", n.URL, n.Field, n.SHA256, a.Locked)
			out = append(out, a)
			continue
		}
		host, prefix := urlHost(n.URL), forge.RepoPrefix(n.URL, r.cfg.Forges)
		switch {
		case !hosts[host]:
			a.Kind = AnomalyNewHost
			a.Detail = fmt.Sprintf("%s (%s): host %s is in no URL lock.yaml records for %s", n.URL, n.Field, host, res.Source)
		case !prefixes[prefix]:
			a.Kind = AnomalyNewPrefix
			a.Detail = fmt.Sprintf("%s (%s): prefix %s is in no URL lock.yaml records for %s", n.URL, n.Field, prefix, res.Source)
		default:
			locked := byPath[r.repoPath(n.URL)]
			i := slices.IndexFunc(locked, func(l lockedAt) bool { return l.sha != string(n.SHA256) })
			if i < 0 {
				continue // a new resource under known prefixes: checkLock's "not in lock.yaml"
			}
			a.Kind, a.Locked = AnomalyChangedPin, locked[i].url+"#sha256="+locked[i].sha
			a.Detail = fmt.Sprintf("%s (%s): lock.yaml has this resource as %s", n.URL+"#sha256="+string(n.SHA256), n.Field, a.Locked)
		}
		out = append(out, a)
	}
	return out
}

type lockedAt struct{ url, sha string }

func urlHost(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return strings.ToLower(p.Host)
}

// repoPath names a resource across commits: for a forge URL its host,
// repository and path (tree, blob and raw forms alike, the ref left out);
// else the URL.
func (r *resolver) repoPath(u string) string { return repoPathOf(u, r.cfg.Forges) }

// recordAnomalies audits each anomaly of res (one entry each, fetch_type
// of the resource, anomaly set) and adds its line to res.Warnings.
func (r *resolver) recordAnomalies(res *Result) {
	for _, a := range res.Anomalies {
		var n *Node
		for _, m := range res.Graph.Nodes {
			if m.Remote && m.URL == a.URL {
				n = m
				break
			}
		}
		if r.o.Audit != nil && n != nil {
			err := r.o.Audit.Append(audit.Entry{
				TraceID: r.traceID, FetchTime: r.now().UTC(), URL: a.URL, SHA256: a.SHA256,
				FetchType: n.FetchType, AllowedBy: n.AllowedBy, CacheHit: n.CacheHit, Anomaly: a.Kind, Detail: a.Detail,
			})
			if err != nil && r.auditErr == nil {
				r.auditErr = err
			}
		}
		res.Warnings = append(res.Warnings, a.String())
	}
}
