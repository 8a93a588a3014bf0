//go:build linux

package local

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// A session's groups outlive a host process that dies before Terminate
// (SIGKILL, the OOM killer, a CI job's timeout): the sandbox's processes die
// with it (the init's parent-death signal), its groups stay behind, empty,
// and nothing else removes them. Each new session therefore removes the
// leftovers it finds beside its own.

// staleAge is how long a session group must have existed before another
// session may judge it left behind: its owner creates it a moment before
// moving the sandbox init into it.
const staleAge = 2 * time.Minute

// isSessionGroup reports whether name is a session group's name:
// "fullsend-" and the 12 lower-case hex digits of randomID.
func isSessionGroup(name string) bool {
	id, ok := strings.CutPrefix(name, "fullsend-")
	if !ok || len(id) != 12 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// sweepStale removes the session groups under the parents env creates
// sessions in that are older than staleAge at now and hold no process in
// their whole subtree. It returns how many it removed. It is best effort:
// a group it cannot judge or remove stays, and the kernel refuses to
// remove a group that a process has entered meanwhile.
func sweepStale(env cgroupEnv, now time.Time) int {
	removed := 0
	for _, p := range sessionParents(env) {
		ents, err := os.ReadDir(p)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.IsDir() || !isSessionGroup(e.Name()) {
				continue
			}
			g := filepath.Join(p, e.Name())
			fi, err := os.Lstat(g)
			if err != nil || now.Sub(fi.ModTime()) < staleAge {
				continue
			}
			if busy, err := populated(g, env.v2 != ""); err != nil || busy {
				continue
			}
			if removeTree(g) == nil {
				removed++
			}
		}
	}
	return removed
}

// sessionParents lists the directories env creates session groups in,
// each once (v1 hierarchies may share one).
func sessionParents(env cgroupEnv) []string {
	if env.v2 != "" {
		return []string{env.v2}
	}
	var out []string
	for _, d := range env.v1 {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// populated reports whether a process is in group g or below it: on the
// unified hierarchy as the kernel counts it (cgroup.events), on v1 by
// reading the process list of every group in the subtree.
func populated(g string, v2 bool) (bool, error) {
	if v2 {
		v, err := cgKey(filepath.Join(g, "cgroup.events"), "populated")
		return v != "0", err
	}
	busy := false
	err := filepath.WalkDir(g, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(b)) > 0 {
			busy = true
			return filepath.SkipAll
		}
		return nil
	})
	return busy, err
}

// removeTree removes group g and the groups below it, deepest first (a
// group's control files go with it).
func removeTree(g string) error {
	ents, err := os.ReadDir(g)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() {
			if err := removeTree(filepath.Join(g, e.Name())); err != nil {
				return err
			}
		}
	}
	return os.Remove(g)
}
