package resolve

import (
	"fmt"

	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/lock"
)

// lockedOverrides maps the field of each root edge to a skill with file
// overrides ("skills[0]", "forge.github.skills[1]") to its whole override
// set as lock.yaml records it: each path with the override file's lock id
// and sha256, or deleted. The loaded harness lists skills and overrides as
// written; the graph's edges carry the same indexes.
func lockedOverrides(res *Result) map[string][]lock.Override {
	if res.Loaded == nil || res.Graph == nil || res.Graph.Root == nil {
		return nil
	}
	edges := map[string]*Node{}
	for _, e := range res.Graph.Root.Edges {
		edges[e.Field] = e.To
	}
	out := map[string][]lock.Override{}
	add := func(prefix string, h *harness.Harness) {
		for i, o := range h.SkillOverrides {
			j := -1
			for k, s := range h.Skills {
				if s == o.Skill {
					j = k
					break
				}
			}
			if j < 0 {
				continue
			}
			lo := lock.Override{Path: o.Path, Deleted: o.Source == ""}
			if !lo.Deleted {
				n := edges[fmt.Sprintf("%sskill_overrides[%d]", prefix, i)]
				if n == nil {
					continue // not resolved: the lock cannot name it
				}
				lo.Source, lo.SHA256 = lockID(n, res.Root), string(n.SHA256)
			}
			field := fmt.Sprintf("%sskills[%d]", prefix, j)
			out[field] = append(out[field], lo)
		}
	}
	add("", res.Loaded)
	for _, name := range res.Loaded.ForgeNames() {
		add("forge."+name+".", res.Loaded.Forge[name])
	}
	for _, l := range out {
		lock.SortOverrides(l)
	}
	return out
}

// overrideWarnings compares the override set of every skill of res with
// the one its lock entry records: a changed target, override file or
// deletion makes the entry stale, as a changed pin does. A skill the entry
// does not list at all is reported by checkLock already.
func overrideWarnings(res *Result, entry *lock.Harness, fix string) []string {
	sets := lockedOverrides(res)
	var warn []string
	for _, e := range res.Graph.Root.Edges {
		if e.Field == "base" || e.To.Kind != "skill" {
			continue
		}
		id := lockID(e.To, res.Root)
		locked, ok := lockedDep(entry, groupOf(e.Field), id)
		if !ok {
			continue
		}
		if d := lock.DiffOverrides(sets[e.Field], locked.Overrides); d != "" {
			warn = append(warn, fmt.Sprintf("%s: skill %s (%s): file override %s; run `%s` to update it", res.Source, id, e.Field, d, fix))
		}
	}
	return warn
}

// lockedDep is the dependency of group with URL or path id in entry.
func lockedDep(entry *lock.Harness, group, id string) (lock.Dep, bool) {
	for _, g := range entry.Dependencies {
		if g.Field != group {
			continue
		}
		for _, d := range g.Deps {
			if d.ID() == id {
				return d, true
			}
		}
	}
	return lock.Dep{}, false
}
