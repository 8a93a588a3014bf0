package resolve

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// SkillRequest names the skill directory ResolveSkill starts from.
type SkillRequest struct {
	// Ref is the skill directory's pinned https URL (URL#sha256=TREEHASH):
	// a forge tree URL (a blob or raw URL of the same path is taken as the
	// tree, as in a harness).
	Ref string
	// Allowed is the effective allowed_remote_resources the skill and
	// every dependency must match.
	Allowed []string
	// FetchType is the audit fetch_type of every entry (default
	// FetchStatic; package fetchsvc passes FetchRuntime).
	FetchType string
	// Audited says the caller has already audited obtaining the skill
	// itself (package fetchsvc audits each request): its cache hit here
	// is not audited again. A fetch of it is, and so is every dependency.
	Audited bool
}

// SkillResult is a resolved skill directory.
type SkillResult struct {
	// Graph.Root is the skill (depth 0, local path in the cache);
	// Graph.Nodes are its transitive dependencies in breadth-first order.
	Graph   *Graph
	TraceID string
	// Notices are scanner notices, then the registry tier's warnings
	// (see Result.Warnings).
	Notices []string
}

// Dependencies lists the skill directories below the skill (transitive
// dependencies: entries that are directories, not single files), in graph
// order.
func (s *SkillResult) Dependencies() []*Node {
	var out []*Node
	for _, n := range s.Graph.Nodes {
		if n.Kind == "skill" && n.Type == cas.TypeDirectory {
			out = append(out, n)
		}
	}
	return out
}

// ResolveSkill resolves one skill directory and its transitive
// dependencies: (SKILL.md frontmatter) with the machinery of Resolve and
// the rules of the package documentation: the allowlist (req.Allowed),
// pins, cache first, scan before cache, forge-only directories,
// deduplication, cycles, and max_depth and max_resources counted from the
// skill: the skill is at depth 0 and is the first of max_resources. It
// uses Options' Config, Store, Network, Offline, Scanner, Audit, Progress,
// Concurrency, TraceID and Now; the harness options (Root, Layers, Forge,
// Lock, Frozen, Yes, Confirm) do not apply. Errors are as Resolve's; one
// about a dependency is an *Error whose chain starts at the skill's URL.
func ResolveSkill(ctx context.Context, req SkillRequest, o Options) (*SkillResult, error) {
	r, err := newResolver(o)
	if err != nil {
		return nil, err
	}
	r.start(ctx)
	for i, p := range req.Allowed {
		c, err := ref.CanonicalPrefix(p)
		if err != nil {
			return nil, fmt.Errorf("skill %s: allowed_remote_resources[%d]: %w", req.Ref, i, err)
		}
		r.allow = append(r.allow, c)
	}
	k, err := ref.Classify(req.Ref)
	if err != nil {
		return nil, fmt.Errorf("skill %w", err)
	}
	if k != ref.URL {
		return nil, fmt.Errorf("skill %q: %w: want a pinned https URL", req.Ref, ErrWrongType)
	}
	rf, err := ref.Parse(req.Ref)
	if err != nil {
		return nil, fmt.Errorf("skill %w", err)
	}
	fetchType := req.FetchType
	if fetchType == "" {
		fetchType = FetchStatic
	}
	root := &Node{Kind: "skill", Ref: req.Ref, FetchType: fetchType, hitAudited: req.Audited}
	if err := r.remoteNode(root, rf); err != nil {
		return nil, fmt.Errorf("skill %w", err)
	}
	if root.Type != cas.TypeDirectory {
		return nil, fmt.Errorf("skill %s: %w: a file, want a skill directory", root.URL, ErrWrongType)
	}
	root.container = root.URL
	r.nodes[root.key] = root
	r.count = 1
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return r.process(gctx, g, []*Node{root}) })
	err = g.Wait()
	warnings := r.finish() // background pushes end here
	if err != nil {
		return nil, withWarnings(err, warnings)
	}
	graph := &Graph{Root: root}
	if cyc, longest := graph.cycle(); cyc != "" {
		return nil, &Error{Chain: []string{root.container}, Err: fmt.Errorf("%w: %s", ErrCycle, cyc)}
	} else if longest > r.maxDepth {
		return nil, &Error{Chain: []string{root.container}, Err: fmt.Errorf("%w: a path of %d references exceeds max_depth %d", ErrTooDeep, longest, r.maxDepth)}
	}
	graph.order()
	if fetchType == FetchRuntime {
		// The sandbox already runs: a policy the skill needs could not
		// narrow it any more (package run applies skill policies when
		// it plans the sandbox). Fail closed.
		if sp := graph.SkillPolicies(); len(sp) > 0 {
			return nil, &Error{Chain: []string{root.container}, Err: fmt.Errorf("%w: skill %s names policy %s, which cannot be applied to a sandbox that is already running; list the skill in the harness instead", ErrSkillPolicyRuntime, sp[0].Skill.ID(), sp[0].Node.ID())}
		}
	}
	if r.auditErr != nil {
		return nil, fmt.Errorf("audit log: %w", r.auditErr)
	}
	return &SkillResult{Graph: graph, TraceID: r.traceID, Notices: append(r.notices, warnings...)}, nil
}
