package local

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

// cgroupSet is the per-session cgroups (v1 controllers or one v2 group).
type cgroupSet struct {
	dirs []string
	pids string // the group holding pids.max, if any
	max  int
}

// PidsReserve is added to the pids limit for the sandbox's own tasks (the
// init and the supervisor are Go programs; their threads count as tasks).
// The limit becomes Pids + (tasks at ready time) + PidsReserve.
const PidsReserve = 8

// reservePids raises pids.max by the tasks the sandbox itself uses.
func (cs *cgroupSet) reservePids() {
	if cs == nil || cs.pids == "" {
		return
	}
	b, err := os.ReadFile(filepath.Join(cs.pids, "pids.current"))
	if err != nil {
		return
	}
	cur, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	os.WriteFile(filepath.Join(cs.pids, "pids.max"), []byte(strconv.Itoa(cs.max+cur+PidsReserve)), 0)
}

// cgroupRoots finds writable controller directories: cgroup v2 when the
// process' group is writable (delegated), else v1 pids/memory/cpu when
// mounted and writable (as root). Missing controllers are absent from the map.
func cgroupRoots() (v2 string, v1 map[string]string) {
	v1 = map[string]string{}
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", v1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var unified string
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			unified = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			switch c {
			case "pids", "memory", "cpu":
				dir := filepath.Join("/sys/fs/cgroup", c, parts[2])
				if writable(dir) {
					v1[c] = dir
				}
			}
		}
	}
	if len(v1) == 0 && unified != "" {
		dir := filepath.Join("/sys/fs/cgroup", unified)
		if _, err := os.Stat(filepath.Join(dir, "cgroup.controllers")); err == nil && writable(dir) {
			ctrl, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
			if strings.Contains(string(ctrl), "pids") || strings.Contains(string(ctrl), "memory") {
				v2 = dir
			}
		}
	}
	return v2, v1
}

func writable(dir string) bool {
	return dirWritable(dir)
}

// newCgroups creates the session's groups and applies limits. It returns
// which limits are enforced by cgroups.
func newCgroups(id string, l sandbox.Limits) (*cgroupSet, map[string]bool, error) {
	enforced := map[string]bool{}
	if l.MemoryBytes == 0 && l.Pids == 0 && l.CPUs == 0 {
		return &cgroupSet{}, enforced, nil
	}
	v2, v1 := cgroupRoots()
	cs := &cgroupSet{}
	mk := func(parent string) (string, error) {
		d := filepath.Join(parent, "fullsend-"+id)
		if err := os.Mkdir(d, 0o755); err != nil {
			return "", err
		}
		cs.dirs = append(cs.dirs, d)
		return d, nil
	}
	write := func(dir, file, val string) error {
		return os.WriteFile(filepath.Join(dir, file), []byte(val), 0)
	}
	fail := func(err error) (*cgroupSet, map[string]bool, error) {
		cs.remove()
		return nil, nil, err
	}
	if v2 != "" {
		d, err := mk(v2)
		if err != nil {
			return fail(err)
		}
		if l.Pids > 0 && write(d, "pids.max", strconv.Itoa(l.Pids+64)) == nil {
			enforced["pids"] = true
			cs.pids, cs.max = d, l.Pids
		}
		if l.MemoryBytes > 0 && write(d, "memory.max", strconv.FormatInt(l.MemoryBytes, 10)) == nil {
			write(d, "memory.swap.max", "0")
			enforced["memory"] = true
		}
		if l.CPUs > 0 && write(d, "cpu.max", fmt.Sprintf("%d 100000", int(l.CPUs*100000))) == nil {
			enforced["cpu"] = true
		}
		return cs, enforced, nil
	}
	if dir, ok := v1["pids"]; ok && l.Pids > 0 {
		d, err := mk(dir)
		if err != nil {
			return fail(err)
		}
		// Generous until ready: then reservePids sets the real limit.
		if err := write(d, "pids.max", strconv.Itoa(l.Pids+64)); err != nil {
			return fail(err)
		}
		enforced["pids"] = true
		cs.pids, cs.max = d, l.Pids
	}
	if dir, ok := v1["memory"]; ok && l.MemoryBytes > 0 {
		d, err := mk(dir)
		if err != nil {
			return fail(err)
		}
		if err := write(d, "memory.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
			return fail(err)
		}
		write(d, "memory.memsw.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10))
		write(d, "memory.swappiness", "0")
		enforced["memory"] = true
	}
	if dir, ok := v1["cpu"]; ok && l.CPUs > 0 {
		d, err := mk(dir)
		if err != nil {
			return fail(err)
		}
		write(d, "cpu.cfs_period_us", "100000")
		if err := write(d, "cpu.cfs_quota_us", strconv.Itoa(int(l.CPUs*100000))); err != nil {
			return fail(err)
		}
		enforced["cpu"] = true
	}
	return cs, enforced, nil
}

func (cs *cgroupSet) add(pid int) error {
	for _, d := range cs.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("cgroup %s: %w", d, err)
		}
	}
	return nil
}

// remove deletes the groups, waiting briefly for dying tasks to leave.
func (cs *cgroupSet) remove() error {
	if cs == nil {
		return nil
	}
	var errs []error
	for i := len(cs.dirs) - 1; i >= 0; i-- {
		d := cs.dirs[i]
		var err error
		for try := 0; try < 200; try++ {
			err = os.Remove(d)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				err = nil
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	cs.dirs = nil
	return errors.Join(errs...)
}
