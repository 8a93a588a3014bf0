//go:build linux

package local

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
	"github.com/fullsend-ai/fullsend/internal/sandbox/local/guest"
)

// Cgroup layout of a session (see doc.go, "Limits"):
//
//	P/fullsend-ID/          the session: pids.max = Pids+PidsReserve, CPU quota
//	P/fullsend-ID/sys/      v2 only: the init, the supervisor, each exec's pid 1
//	P/fullsend-ID/agent/    agent commands: pids.max = Pids, memory limit
//	P/fullsend-ID/agent/eN  one per exec: its commands (OOM kills counted here)
//
// With cgroup v1 there is one such tree per controller hierarchy (pids,
// memory, cpu) and the sandbox's own processes stay in the session group.

// PidsReserve is how many tasks the sandbox's own processes (the init, the
// supervisor, one pid 1 per running exec, archive helpers — Go programs,
// each a few threads) may use on top of Limits.Pids. Agent commands never
// get them: their group is capped at Limits.Pids.
const PidsReserve = 256

// cgroupEnv is what this process may use.
type cgroupEnv struct {
	// v2 is the directory under which session groups are created on the
	// unified hierarchy ("" = none usable), with the controllers it offers.
	v2     string
	v2Ctrl map[string]bool
	// v1 maps "pids", "memory", "cpu" to this process' writable group in
	// that controller's hierarchy.
	v1 map[string]string
}

func (e cgroupEnv) has(ctrl string) bool {
	if e.v2 != "" {
		return e.v2Ctrl[ctrl]
	}
	_, ok := e.v1[ctrl]
	return ok
}

func (e cgroupEnv) version() string {
	if e.v2 != "" {
		return "cgroup v2"
	}
	return "cgroup v1"
}

type mountPoint struct{ root, dir string }

// readMounts returns the cgroup2 mount and the v1 mounts by controller.
func readMounts(mountinfo string) (v2 *mountPoint, v1 map[string]mountPoint) {
	v1 = map[string]mountPoint{}
	for _, line := range strings.Split(mountinfo, "\n") {
		// id parent major:minor root mountpoint opts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		mp := mountPoint{root: unescapeMount(f[3]), dir: unescapeMount(f[4])}
		switch g[0] {
		case "cgroup2":
			if v2 == nil {
				v2 = &mp
			}
		case "cgroup":
			for _, o := range strings.Split(g[2], ",") {
				if o == "pids" || o == "memory" || o == "cpu" {
					if _, dup := v1[o]; !dup {
						v1[o] = mp
					}
				}
			}
		}
	}
	return v2, v1
}

func unescapeMount(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

// within maps a cgroup path of /proc/self/cgroup to a directory of mount m.
func within(m mountPoint, cg string) (string, bool) {
	rel := cg
	if m.root != "/" {
		r, ok := strings.CutPrefix(cg, m.root)
		if !ok || (r != "" && !strings.HasPrefix(r, "/")) {
			return "", false
		}
		rel = r
	}
	return filepath.Join(m.dir, rel), true
}

func fileWritable(p string) bool { return unix.Access(p, unix.W_OK) == nil }

// detectCgroups finds where this process may create session groups. On
// the unified hierarchy that is the nearest ancestor of its own group that
// it may write and that hands the pids or memory controller to its
// children (its own group cannot: a group with processes has no
// controllers for its children); on v1, its own group in each writable
// controller hierarchy. The unified hierarchy wins when usable.
func detectCgroups() cgroupEnv {
	mi, err1 := os.ReadFile("/proc/self/mountinfo")
	cg, err2 := os.ReadFile("/proc/self/cgroup")
	if err1 != nil || err2 != nil {
		return cgroupEnv{v1: map[string]string{}}
	}
	return detectCgroupsFrom(string(mi), string(cg), fileWritable)
}

func detectCgroupsFrom(mountinfo, selfCgroup string, writable func(string) bool) cgroupEnv {
	env := cgroupEnv{v1: map[string]string{}}
	v2m, v1m := readMounts(mountinfo)
	sc := bufio.NewScanner(strings.NewReader(selfCgroup))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			if v2m == nil {
				continue
			}
			own, ok := within(*v2m, parts[2])
			if !ok {
				continue
			}
			for dir := own; ; dir = filepath.Dir(dir) {
				if dir != own || dir == filepath.Clean(v2m.dir) {
					ctrl := readWords(filepath.Join(dir, "cgroup.subtree_control"))
					if (ctrl["pids"] || ctrl["memory"]) && writable(dir) && writable(filepath.Join(dir, "cgroup.procs")) {
						env.v2, env.v2Ctrl = dir, ctrl
						break
					}
				}
				if dir == filepath.Clean(v2m.dir) || dir == "/" {
					break
				}
			}
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			m, ok := v1m[c]
			if !ok {
				continue
			}
			if dir, ok := within(m, parts[2]); ok && writable(dir) {
				env.v1[c] = dir
			}
		}
	}
	if env.v2 != "" {
		env.v1 = map[string]string{}
	}
	return env
}

func readWords(p string) map[string]bool {
	b, _ := os.ReadFile(p)
	out := map[string]bool{}
	for _, w := range strings.Fields(string(b)) {
		out[w] = true
	}
	return out
}

// cgroupSet is one session's groups.
type cgroupSet struct {
	v2       bool
	sessions []string // per hierarchy (v2: one)
	agents   []string // per hierarchy that bounds agent commands
	sys      string   // v2: where the sandbox's own processes go
	memAgent string   // agent group holding the memory limit, "" = none
	// enforced maps "pids", "memory", "cpu" to the mechanism used.
	enforced map[string]string
	created  []string // every directory made, in creation order
	execs    atomic.Uint64
}

// newCgroups creates the session's groups and applies l (resolved). Limits
// no usable controller enforces are absent from cs.enforced.
// Groups that killed sessions left behind are removed first (sweepStale).
func newCgroups(id string, l sandbox.Limits) (*cgroupSet, error) {
	env := detectCgroups()
	sweepStale(env, time.Now())
	return newCgroupsIn(env, id, l)
}

func newCgroupsIn(env cgroupEnv, id string, l sandbox.Limits) (*cgroupSet, error) {
	cs := &cgroupSet{enforced: map[string]string{}}
	v := cgroupValuesOf(l)
	var err error
	if env.v2 != "" {
		err = cs.setupV2(env, "fullsend-"+id, v)
	} else {
		err = cs.setupV1(env, "fullsend-"+id, v)
	}
	if err != nil {
		// Nothing of a session that failed half-way is left behind.
		cs.remove()
		return nil, err
	}
	return cs, nil
}

// cgroupValues are the resolved limits as the cgroup files take them.
type cgroupValues struct {
	pidsMax     string // the agent's commands
	sessionPids string // the whole session: pidsMax plus PidsReserve
	mem         string
	quota       int // CPU microseconds per 100 ms period, at least 1000
}

func cgroupValuesOf(l sandbox.Limits) cgroupValues {
	v := cgroupValues{
		pidsMax:     strconv.Itoa(l.Pids),
		sessionPids: strconv.Itoa(l.Pids + PidsReserve),
		mem:         strconv.FormatInt(l.MemoryBytes, 10),
		quota:       int(l.CPUs * 100000),
	}
	if v.quota < 1000 {
		v.quota = 1000
	}
	return v
}

// mkdir creates the group parent/name and records it for remove.
func (cs *cgroupSet) mkdir(parent, name string) (string, error) {
	d := filepath.Join(parent, name)
	if err := os.Mkdir(d, 0o755); err != nil {
		return "", err
	}
	cs.created = append(cs.created, d)
	return d, nil
}

// cgWrite writes val to the control file dir/file.
func cgWrite(dir, file, val string) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(val), 0o644); err != nil {
		return fmt.Errorf("cgroup %s: %w", filepath.Join(dir, file), err)
	}
	return nil
}

// setupV2 makes, under the delegated group env.v2, the session group name
// (pids with the reserve, CPU) with its sys group (the sandbox's own
// processes) and agent group (the commands' pids and memory), enabling the
// controllers the parent delegates.
func (cs *cgroupSet) setupV2(env cgroupEnv, name string, v cgroupValues) error {
	cs.v2 = true
	sess, err := cs.mkdir(env.v2, name)
	if err != nil {
		return err
	}
	cs.sessions = []string{sess}
	avail := env.v2Ctrl // the parent's subtree_control: the session's controllers
	for _, c := range []string{"pids", "memory", "cpu"} {
		if avail[c] {
			if err := cgWrite(sess, "cgroup.subtree_control", "+"+c); err != nil {
				return err
			}
		}
	}
	if cs.sys, err = cs.mkdir(sess, "sys"); err != nil {
		return err
	}
	agent, err := cs.mkdir(sess, "agent")
	if err != nil {
		return err
	}
	cs.agents = []string{agent}
	if avail["memory"] {
		if err := cgWrite(agent, "cgroup.subtree_control", "+memory"); err != nil {
			return err
		}
	}
	if avail["pids"] {
		if err := cgWrite(sess, "pids.max", v.sessionPids); err != nil {
			return err
		}
		if err := cgWrite(agent, "pids.max", v.pidsMax); err != nil {
			return err
		}
		cs.enforced["pids"] = "cgroup v2 pids.max"
	}
	if avail["memory"] {
		if err := cgWrite(agent, "memory.max", v.mem); err != nil {
			return err
		}
		cgWrite(agent, "memory.swap.max", "0")
		cs.memAgent = agent
		cs.enforced["memory"] = "cgroup v2 memory.max"
	}
	if avail["cpu"] {
		if err := cgWrite(sess, "cpu.max", fmt.Sprintf("%d 100000", v.quota)); err != nil {
			return err
		}
		cs.enforced["cpu"] = "cgroup v2 cpu.max"
	}
	return nil
}

// setupV1 makes a session group name in each writable v1 hierarchy, with
// an agent group where the limit bounds the commands (pids, memory); CPU
// bounds the whole session.
func (cs *cgroupSet) setupV1(env cgroupEnv, name string, v cgroupValues) error {
	if dir, ok := env.v1["pids"]; ok {
		_, err := cs.v1Groups(dir, name, func(sess, agent string) error {
			if err := cgWrite(sess, "pids.max", v.sessionPids); err != nil {
				return err
			}
			return cgWrite(agent, "pids.max", v.pidsMax)
		})
		if err != nil {
			return err
		}
		cs.enforced["pids"] = "cgroup v1 pids.max"
	}
	if dir, ok := env.v1["memory"]; ok {
		agent, err := cs.v1Groups(dir, name, func(_, agent string) error {
			if err := cgWrite(agent, "memory.limit_in_bytes", v.mem); err != nil {
				return err
			}
			cgWrite(agent, "memory.memsw.limit_in_bytes", v.mem)
			cgWrite(agent, "memory.swappiness", "0")
			return nil
		})
		if err != nil {
			return err
		}
		cs.memAgent = agent
		cs.enforced["memory"] = "cgroup v1 memory.limit_in_bytes"
	}
	if dir, ok := env.v1["cpu"]; ok {
		sess, err := cs.mkdir(dir, name)
		if err != nil {
			return err
		}
		cgWrite(sess, "cpu.cfs_period_us", "100000")
		if err := cgWrite(sess, "cpu.cfs_quota_us", strconv.Itoa(v.quota)); err != nil {
			return err
		}
		cs.sessions = append(cs.sessions, sess)
		cs.enforced["cpu"] = "cgroup v1 cpu.cfs_quota_us"
	}
	return nil
}

// v1Groups makes the session group name under the v1 hierarchy dir and
// its agent group, applies set to them and records both; it returns the
// agent group.
func (cs *cgroupSet) v1Groups(dir, name string, set func(sess, agent string) error) (string, error) {
	sess, err := cs.mkdir(dir, name)
	if err != nil {
		return "", err
	}
	agent, err := cs.mkdir(sess, "agent")
	if err != nil {
		return "", err
	}
	if err := set(sess, agent); err != nil {
		return "", err
	}
	cs.sessions = append(cs.sessions, sess)
	cs.agents = append(cs.agents, agent)
	return agent, nil
}

// homes are the groups of the sandbox's own processes: the sys group on
// v2, the session group of each v1 hierarchy.
func (cs *cgroupSet) homes() []string {
	if cs == nil {
		return nil
	}
	if cs.v2 {
		return []string{cs.sys}
	}
	return cs.sessions
}

// add moves pid (the sandbox init) into the home groups.
func (cs *cgroupSet) add(pid int) error {
	for _, d := range cs.homes() {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("cgroup %s: %w", d, err)
		}
	}
	return nil
}

// prime makes the next cgroup move cheap. Moving a task between cgroups
// takes a lock whose writers wait for an RCU grace period (milliseconds)
// unless another move took it within about a grace period. Rewriting pid —
// the sandbox init, already in the first home group: nothing moves — there
// starts that wait early. Errors do not matter here.
func (cs *cgroupSet) prime(pid int) {
	if h := cs.homes(); len(h) > 0 {
		os.WriteFile(filepath.Join(h[0], "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
	}
}

// openHomes opens the cgroup.procs file of each home group for writing,
// for the sandbox init, which moves the supervisor into them.
func (cs *cgroupSet) openHomes() ([]*os.File, error) {
	var fs []*os.File
	for _, d := range cs.homes() {
		f, err := os.OpenFile(filepath.Join(d, "cgroup.procs"), os.O_WRONLY, 0)
		if err != nil {
			guest.CloseAll(fs)
			return nil, fmt.Errorf("cgroup %s: %w", d, err)
		}
		fs = append(fs, f)
	}
	return fs, nil
}

// execGroup is the group of one exec's commands (one directory per
// hierarchy that bounds agent commands).
type execGroup struct {
	dirs  []string
	procs []*os.File // cgroup.procs of each, for the exec's pid 1
	mem   string     // the one under the memory limit, "" = none
	v2    bool
}

// newExec creates the groups of one exec and opens their cgroup.procs for
// writing: the exec's pid 1 moves the command (the enter step) into them by
// writing its pid before it runs (the descriptors carry this process'
// credentials, so the unprivileged pid 1 may).
func (cs *cgroupSet) newExec() (*execGroup, error) {
	if cs == nil || len(cs.agents) == 0 {
		return &execGroup{}, nil
	}
	name := "e" + strconv.FormatUint(cs.execs.Add(1), 10)
	eg := &execGroup{v2: cs.v2}
	for _, a := range cs.agents {
		d := filepath.Join(a, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			eg.remove()
			return nil, fmt.Errorf("cgroup %s: %w", d, err)
		}
		eg.dirs = append(eg.dirs, d)
		f, err := os.OpenFile(filepath.Join(d, "cgroup.procs"), os.O_WRONLY, 0)
		if err != nil {
			eg.remove()
			return nil, fmt.Errorf("cgroup %s: %w", d, err)
		}
		eg.procs = append(eg.procs, f)
		if a == cs.memAgent {
			eg.mem = d
		}
	}
	return eg, nil
}

// oomKills reads how many of the exec's processes the OOM killer took.
func (eg *execGroup) oomKills() int64 {
	if eg.mem == "" {
		return 0
	}
	file := "memory.oom_control"
	if eg.v2 {
		file = "memory.events"
	}
	v, err := cgKey(filepath.Join(eg.mem, file), "oom_kill")
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// cgKey reads the value of key in a "key value" per line control file
// (memory.events, cgroup.events, memory.oom_control).
func cgKey(path, key string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+" "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("%s: no %s", path, key)
}

// closeFiles drops this process' copies of the cgroup.procs descriptors.
func (eg *execGroup) closeFiles() {
	for _, f := range eg.procs {
		f.Close()
	}
	eg.procs = nil
}

func (eg *execGroup) remove() {
	eg.closeFiles()
	for i := len(eg.dirs) - 1; i >= 0; i-- {
		rmdirWait(eg.dirs[i])
	}
	eg.dirs = nil
}

// rmdirWait removes a cgroup directory, waiting briefly for dying tasks to
// leave it.
func rmdirWait(d string) error {
	var err error
	for try := 0; try < 400; try++ {
		err = os.Remove(d)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return err
}

// remove deletes every group of the session (leftover exec groups first).
func (cs *cgroupSet) remove() error {
	if cs == nil {
		return nil
	}
	var errs []error
	for _, a := range cs.agents {
		ents, _ := os.ReadDir(a)
		for _, e := range ents {
			if e.IsDir() {
				if err := rmdirWait(filepath.Join(a, e.Name())); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	for i := len(cs.created) - 1; i >= 0; i-- {
		if err := rmdirWait(cs.created[i]); err != nil {
			errs = append(errs, err)
		}
	}
	cs.created = nil
	return errors.Join(errs...)
}
