package run

import (
	"context"

	"github.com/fullsend-ai/fullsend/internal/runtime"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// ErrImage marks a refused --image (bad usage: the CLI exits 2).
var ErrImage = runtime.ErrImage

// configureWeb gives a runtime whose agent fetches web pages on the
// runner host (runtime.WebFetcher: native web_fetch), when the run asks
// for it, the egress policy of the sandbox (the plan's network allowlist,
// the backend's allowed private networks and resolver) and the run's scan
// pipeline: fetched text is scanned as remote context and its findings
// join the report (phase "web_fetch").
func (x *execution) configureWeb() error {
	p := x.plan
	wf, ok := x.rt.(runtime.WebFetcher)
	if !ok || !wf.NeedsWeb(p.RuntimeConfig()) {
		return nil
	}
	pl, err := x.scanPipeline()
	if err != nil {
		return err
	}
	scanText := func(ctx context.Context, text []byte, source string) ([]string, error) {
		res, err := pl.Scan(ctx, text, scan.Meta{Path: source, Origin: scan.Remote, Kind: "context"})
		if err != nil {
			return nil, err
		}
		// evMu also guards the findings that runtime events add (verdicts).
		x.evMu.Lock()
		x.record("web_fetch", res.Findings, res.Blocked)
		x.evMu.Unlock()
		var rules []string
		if res.Blocked {
			for _, f := range res.Blocking() {
				rules = append(rules, f.Rule)
			}
		}
		return rules, nil
	}
	// The egress proxy's own policy: its allowlist, private networks and
	// resolver, so web_fetch reaches nothing the sandbox could not.
	so := x.o.SandboxOptions
	return wf.SetWebPolicy(runtime.WebPolicy{Allow: p.Spec.Network.Allow, AllowedPrivateNetworks: so.AllowedPrivateNetworks,
		Resolver: so.Resolver, Scan: scanText})
}
