package resolve

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/lock"
)

// lockID is how a node is named in a lock file: its URL, or its path
// relative to the fullsend dir (absolute when outside it).
func lockID(n *Node, root string) string {
	if n.Remote {
		return n.URL
	}
	if root != "" {
		return filepath.ToSlash(displayPath(n.LocalPath, root))
	}
	return n.LocalPath
}

// FixCommand is the command that refreshes the lock entry of source.
func FixCommand(source string) string { return "fullsend lock --update " + source }

// lockCommand is the command suggested to write (update false) or refresh
// the lock entry of res.
func (r *resolver) lockCommand(res *Result, update bool) string {
	if r.o.LockCommand != nil {
		return r.o.LockCommand(update)
	}
	if update {
		return FixCommand(res.Source)
	}
	return "fullsend lock " + res.Source
}

// checkLock compares res with the lock entry of its harness.
func (r *resolver) checkLock(res *Result) error {
	if err := r.checkVendored(res); err != nil {
		return err
	}
	if r.o.Lock == nil {
		if r.o.Frozen {
			return fmt.Errorf("harness %s: %w: --frozen needs a lock file; run `%s`", res.Source, ErrStale, r.lockCommand(res, false))
		}
		return nil
	}
	_, entry := r.o.Lock.Find(res.Source)
	if entry == nil {
		if r.o.Frozen {
			return fmt.Errorf("harness %s: %w: it has no entry in lock.yaml; run `%s`", res.Source, ErrStale, r.lockCommand(res, false))
		}
		return nil
	}
	fix := r.lockCommand(res, true)
	var warn []string
	if entry.SHA256 != string(res.SHA256) {
		warn = append(warn, fmt.Sprintf("%s has changed since lock.yaml was written; run `%s` to update it", res.Source, fix))
	}
	pins := entry.Pins()
	for _, n := range res.Graph.Nodes {
		id := lockID(n, res.Root)
		got, ok := pins[id]
		switch {
		case !ok:
			warn = append(warn, fmt.Sprintf("%s: dependency %s (%s) is not in lock.yaml; run `%s` to update it", res.Source, id, n.Field, fix))
		case !slices.Contains(got, string(n.SHA256)):
			warn = append(warn, fmt.Sprintf("%s: dependency %s resolved to sha256 %s but lock.yaml has %s; run `%s` to update it", res.Source, id, n.SHA256, strings.Join(got, ", "), fix))
		}
	}
	warn = append(warn, overrideWarnings(res, entry, fix)...)
	if len(warn) == 0 {
		return nil
	}
	if r.o.Frozen {
		return fmt.Errorf("%w (--frozen): %s", ErrStale, warn[0])
	}
	res.Warnings = append(res.Warnings, warn...)
	return nil
}

// groupOf turns a harness field into its lock group: list indexes and the
// host_files ".src" suffix dropped.
func groupOf(field string) string {
	if i := strings.IndexByte(field, '['); i >= 0 {
		return field[:i]
	}
	return field
}

// LockEntry builds the lock entry for res. Remote dependencies get
// resolved_at = now (lock.Harness.KeepTimes restores the previous time of
// unchanged ones).
func LockEntry(res *Result, now time.Time) *lock.Harness {
	ts := now.UTC().Format(time.RFC3339)
	h := &lock.Harness{Source: res.Source, SHA256: string(res.SHA256)}
	var dep func(n *Node, field string, stack []*Node) lock.Dep
	dep = func(n *Node, field string, stack []*Node) lock.Dep {
		d := lock.Dep{Field: field, SHA256: string(n.SHA256), Type: string(n.Type)}
		if n.Remote {
			d.URL, d.Commit, d.ResolvedAt = n.URL, n.Commit, ts
		} else {
			d.Path = lockID(n, res.Root)
		}
		if n.Type == cas.TypeDirectory {
			for _, f := range n.Files {
				d.Files = append(d.Files, lock.FileHash{Path: f.Path, SHA256: string(f.SHA256)})
			}
		}
		if slices.Contains(stack, n) {
			return d
		}
		for _, e := range n.Edges {
			if e.Field == "base" {
				continue
			}
			d.TransitiveDeps = append(d.TransitiveDeps, dep(e.To, e.Field, append(stack, n)))
		}
		return d
	}
	groups := map[string]*lock.Group{}
	var order []string
	add := func(name string, d lock.Dep) {
		g, ok := groups[name]
		if !ok {
			g = &lock.Group{Field: name, List: !lock.IsScalarGroup(name)}
			groups[name] = g
			order = append(order, name)
		}
		g.Deps = append(g.Deps, d)
	}
	for n := res.Graph.Root; ; {
		var next *Node
		for _, e := range n.Edges {
			if e.Field == "base" {
				d := dep(e.To, "", nil)
				d.TransitiveDeps = nil
				add("base", d)
				next = e.To
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	overrides := lockedOverrides(res)
	for _, e := range res.Graph.Root.Edges {
		if e.Field == "base" {
			continue
		}
		d := dep(e.To, "", []*Node{res.Graph.Root})
		d.Overrides = overrides[e.Field]
		add(groupOf(e.Field), d)
	}
	for _, name := range order {
		h.Dependencies = append(h.Dependencies, *groups[name])
	}
	return h
}

// replaced returns a copy of h whose references are the local paths of
// the root's edges.
func replaced(h *harness.Harness, root *Node) *harness.Materialized {
	c := cloneHarness(h)
	for _, e := range root.Edges {
		if e.Field == "base" {
			continue
		}
		setField(c, e.Field, e.To.LocalPath)
	}
	return harness.Materialize(c)
}

func cloneHarness(h *harness.Harness) *harness.Harness {
	c := *h
	c.Skills = slices.Clone(h.Skills)
	c.SkillOverrides = slices.Clone(h.SkillOverrides)
	c.Plugins = slices.Clone(h.Plugins)
	c.Providers = slices.Clone(h.Providers)
	c.Openshell.Profiles = slices.Clone(h.Openshell.Profiles)
	c.HostFiles = slices.Clone(h.HostFiles)
	c.AllowedRemoteResources = slices.Clone(h.AllowedRemoteResources)
	c.Chain = slices.Clone(h.Chain)
	if h.ValidationLoop != nil {
		vl := *h.ValidationLoop
		c.ValidationLoop = &vl
	}
	if h.Forge != nil {
		c.Forge = maps.Clone(h.Forge)
		for k, o := range h.Forge {
			c.Forge[k] = cloneHarness(o)
		}
	}
	return &c
}

// setField sets the reference field named as in harness.FieldRef.Field.
func setField(h *harness.Harness, field, v string) {
	if rest, ok := strings.CutPrefix(field, "forge."); ok {
		name, sub, _ := strings.Cut(rest, ".")
		if o := h.Forge[name]; o != nil {
			setField(o, sub, v)
		}
		return
	}
	idx := func(prefix string) (int, bool) {
		s, ok := strings.CutPrefix(field, prefix+"[")
		if !ok {
			return 0, false
		}
		s, _, _ = strings.Cut(s, "]")
		i, err := strconv.Atoi(s)
		return i, err == nil
	}
	setAt := func(l []string, prefix string) bool {
		if i, ok := idx(prefix); ok && i < len(l) {
			l[i] = v
			return true
		}
		return false
	}
	switch field {
	case "agent":
		h.Agent = v
	case "doc":
		h.Doc = v
	case "policy":
		h.Policy = v
	case "pre_script":
		h.PreScript = v
	case "post_script":
		h.PostScript = v
	case "agent_input":
		h.AgentInput = v
	case "validation_loop.schema":
		h.ValidationLoop.Schema = v
	case "validation_loop.script":
		h.ValidationLoop.Script = v
	default:
		if setAt(h.Skills, "skills") || setAt(h.Plugins, "plugins") || setAt(h.Providers, "providers") ||
			setAt(h.Openshell.Profiles, "openshell.profiles") {
			return
		}
		if i, ok := idx("skill_overrides"); ok && i < len(h.SkillOverrides) {
			h.SkillOverrides[i].Source = v
			return
		}
		if i, ok := idx("host_files"); ok && i < len(h.HostFiles) {
			h.HostFiles[i].Src = v
		}
	}
}
