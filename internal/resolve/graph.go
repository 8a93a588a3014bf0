package resolve

import (
	"fmt"
	"io"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

// Node is one resource of the graph: the harness itself (the root), a base
// harness, or a referenced resource.
type Node struct {
	// Field is the field of the parent that references the node
	// ("agent", "skills[1]", "dependencies[0]", "base"); "" for the root.
	Field string
	// Ref is the reference as written in the parent.
	Ref string
	// URL is the canonical URL without pin (remote nodes only).
	URL string
	// LocalPath is where the content is on disk: the cache's content file
	// or tree dir for remote nodes, the resolved path for local ones.
	LocalPath string
	// SHA256 is the file hash or the tree hash (cas.TreeHash).
	SHA256 ref.Digest
	// Type is cas.TypeFile or cas.TypeDirectory.
	Type cas.Type
	// Kind is what the resource is: harness, base, agent, doc, policy,
	// skill, schema, profile, provider, plugin, script, host_file.
	Kind     string
	Remote   bool
	CacheHit bool
	// Commit is the commit id a forge URL naming a branch or tag resolved
	// to (Options.ResolveCommits only; commits.go).
	Commit string
	// Unverified: a remote node taken from the cache although no fetch
	// has confirmed that its URL serves its hash (offline; vouch.go).
	Unverified bool
	// Depth is the length of the shortest path from the root.
	Depth int
	// Parent is the node through which the shortest (first, in field
	// order) path reaches this one; nil for the root.
	Parent *Node
	// Edges are the node's references, in field order.
	Edges []Edge
	// Files lists a directory's files (path and sha256), sorted by path.
	Files []cas.TreeFile
	// AllowedBy names the allowlist entry that admitted a remote node
	// ("allowed_remote_resources[0]", "trusted_harness_prefixes[1]",
	// "confirmed").
	AllowedBy string
	// FetchType is the audit fetch type ("static", "base_resource", or
	// the one given to ResolveSkill).
	FetchType string

	hitAudited bool // ResolveSkill's root with SkillRequest.Audited
	key        string
	base       string // remote: URL against which children resolve
	container  string // label used in error chains
}

// Edge is a labelled reference from one node to another.
type Edge struct {
	Field string
	Ref   string
	To    *Node
}

// ID is the node's identity in output: its URL when remote, else its local
// path.
func (n *Node) ID() string {
	if n.Remote {
		return n.URL
	}
	return n.LocalPath
}

// Graph is the resolved dependency graph.
type Graph struct {
	Root *Node
	// Nodes lists every node but the root in breadth-first order from the
	// root, following edges in field order (deterministic).
	Nodes []*Node
}

// order fills Parent, Depth, Field and Ref of every node from a
// breadth-first walk in field order and lists the nodes.
func (g *Graph) order() {
	seen := map[*Node]bool{g.Root: true}
	queue := []*Node{g.Root}
	g.Root.Depth, g.Root.Parent = 0, nil
	g.Nodes = nil
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, e := range n.Edges {
			if seen[e.To] {
				continue
			}
			seen[e.To] = true
			e.To.Parent, e.To.Depth, e.To.Field, e.To.Ref = n, n.Depth+1, e.Field, e.Ref
			g.Nodes = append(g.Nodes, e.To)
			queue = append(queue, e.To)
		}
	}
}

// cycle returns the path of a cycle, "" when the graph is acyclic, and the
// longest path length (in edges) from the root.
func (g *Graph) cycle() (string, int) {
	const (
		white = iota
		grey
		black
	)
	color := map[*Node]int{}
	longest := map[*Node]int{}
	var stack []*Node
	var found string
	var visit func(n *Node) int
	visit = func(n *Node) int {
		color[n] = grey
		stack = append(stack, n)
		best := 0
		for _, e := range n.Edges {
			if found != "" {
				break
			}
			switch color[e.To] {
			case grey:
				var parts []string
				start := 0
				for i, s := range stack {
					if s == e.To {
						start = i
					}
				}
				for _, s := range stack[start:] {
					parts = append(parts, s.label())
				}
				parts = append(parts, e.To.label())
				found = strings.Join(parts, " -> ")
			case white:
				if d := visit(e.To) + 1; d > best {
					best = d
				}
			default:
				if d := longest[e.To] + 1; d > best {
					best = d
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
		longest[n] = best
		return best
	}
	d := visit(g.Root)
	return found, d
}

func (n *Node) label() string {
	if n.Remote {
		return n.URL
	}
	if n.Ref != "" {
		return n.Ref
	}
	return n.LocalPath
}

// Resource is one entry of `fullsend resolve --json` "resources".
type Resource struct {
	Field     string `json:"field"`
	Ref       string `json:"ref"`
	URL       string `json:"url"`
	LocalPath string `json:"local_path"`
	SHA256    string `json:"sha256"`
	Type      string `json:"type"`
	Remote    bool   `json:"remote"`
	CacheHit  bool   `json:"cache_hit"`
	Depth     int    `json:"depth"`
	Parent    string `json:"parent"`
	// Unverified is true for a cached resource no fetch has confirmed
	// its URL serves (offline); absent otherwise.
	Unverified bool `json:"unverified,omitempty"`
}

// Resources lists every node but the root, in Graph.Nodes order.
func (g *Graph) Resources() []Resource {
	out := make([]Resource, 0, len(g.Nodes))
	for _, n := range g.Nodes {
		r := Resource{
			Field: n.Field, Ref: n.Ref, URL: n.URL, LocalPath: n.LocalPath, SHA256: string(n.SHA256),
			Type: string(n.Type), Remote: n.Remote, CacheHit: n.CacheHit, Depth: n.Depth,
			Unverified: n.Unverified,
		}
		if n.Parent != nil {
			r.Parent = n.Parent.ID()
		}
		out = append(out, r)
	}
	return out
}

// WriteTree prints the graph as an indented tree, one node per line. A node
// reached a second time (a diamond) is printed with "(see above)" and not
// expanded again.
func (g *Graph) WriteTree(w io.Writer) error {
	var b strings.Builder
	root := g.Root
	fmt.Fprintf(&b, "%s  %s\n", root.label(), short(root.SHA256))
	printed := map[*Node]bool{root: true}
	var walk func(n *Node, prefix string)
	walk = func(n *Node, prefix string) {
		for i, e := range n.Edges {
			branch, next := "├── ", "│   "
			if i == len(n.Edges)-1 {
				branch, next = "└── ", "    "
			}
			c := e.To
			where := "local"
			if c.Remote {
				where = "remote"
				if c.CacheHit {
					where += ", cached"
					if c.Unverified {
						where += ", unverified"
					}
				} else {
					where += ", fetched"
				}
			}
			name := e.Ref
			if c.Remote {
				name = c.URL
			}
			if printed[c] {
				fmt.Fprintf(&b, "%s%s%s: %s  (see above)\n", prefix, branch, e.Field, name)
				continue
			}
			printed[c] = true
			fmt.Fprintf(&b, "%s%s%s: %s  %s %s (%s)\n", prefix, branch, e.Field, name, c.Type, short(c.SHA256), where)
			walk(c, prefix+next)
		}
	}
	walk(root, "")
	_, err := io.WriteString(w, b.String())
	return err
}

func short(d ref.Digest) string {
	if len(d) > 12 {
		return "sha256:" + string(d[:12])
	}
	return "sha256:" + string(d)
}

// WriteDot renders the graph in Graphviz dot: local nodes filled light
// green, remote nodes light blue, edges labelled with their field.
func (g *Graph) WriteDot(w io.Writer) error {
	ids := g.ids()
	var b strings.Builder
	b.WriteString("digraph fullsend {\n  rankdir=LR;\n  node [shape=box, style=filled];\n")
	for _, n := range g.all() {
		color := "palegreen"
		if n.Remote {
			color = "lightblue"
		}
		fmt.Fprintf(&b, "  %s [label=%s, fillcolor=%s];\n", ids[n], dotQuote(n.Kind+"\n"+n.label()), color)
	}
	for _, n := range g.all() {
		for _, e := range n.Edges {
			fmt.Fprintf(&b, "  %s -> %s [label=%s];\n", ids[n], ids[e.To], dotQuote(e.Field))
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMermaid renders the graph as a Mermaid flowchart with the same
// colours and labels as WriteDot.
func (g *Graph) WriteMermaid(w io.Writer) error {
	ids := g.ids()
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for _, n := range g.all() {
		fmt.Fprintf(&b, "  %s[\"%s<br/>%s\"]\n", ids[n], mermaidText(n.Kind), mermaidText(n.label()))
	}
	for _, n := range g.all() {
		for _, e := range n.Edges {
			fmt.Fprintf(&b, "  %s -->|\"%s\"| %s\n", ids[n], mermaidText(e.Field), ids[e.To])
		}
	}
	b.WriteString("  classDef local fill:#98fb98,stroke:#333\n  classDef remote fill:#add8e6,stroke:#333\n")
	var local, remote []string
	for _, n := range g.all() {
		if n.Remote {
			remote = append(remote, ids[n])
		} else {
			local = append(local, ids[n])
		}
	}
	if len(local) > 0 {
		fmt.Fprintf(&b, "  class %s local\n", strings.Join(local, ","))
	}
	if len(remote) > 0 {
		fmt.Fprintf(&b, "  class %s remote\n", strings.Join(remote, ","))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (g *Graph) all() []*Node { return append([]*Node{g.Root}, g.Nodes...) }

func (g *Graph) ids() map[*Node]string {
	ids := map[*Node]string{}
	for i, n := range g.all() {
		ids[n] = fmt.Sprintf("n%d", i)
	}
	return ids
}

func dotQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func mermaidText(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "\n", " ").Replace(s)
}
