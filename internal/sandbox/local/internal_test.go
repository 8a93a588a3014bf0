//go:build linux

package local

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/sandbox"
)

func TestUnavailableNamesTheSetting(t *testing.T) {
	err := unavailable(syscall.EPERM)
	if !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("not ErrUnavailable: %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "user.max_user_namespaces") && !strings.Contains(msg, "CONFIG_USER_NS") {
		t.Errorf("guest.Message names no setting: %s", msg)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("multi-line: %q", msg)
	}
}

// fakeCgroupFS builds a cgroup tree under a temp dir: dirs maps a path
// relative to the mount to the content of its cgroup.subtree_control.
func fakeCgroupFS(t *testing.T, dirs map[string]string) string {
	root := t.TempDir()
	for d, ctrl := range dirs {
		p := filepath.Join(root, d)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(p, "cgroup.subtree_control"), []byte(ctrl), 0o644)
		os.WriteFile(filepath.Join(p, "cgroup.procs"), nil, 0o644)
	}
	return root
}

func TestDetectCgroupsV2PicksDelegatingAncestor(t *testing.T) {
	root := fakeCgroupFS(t, map[string]string{
		"":                               "cpu memory pids",
		"user.slice":                     "memory pids",
		"user.slice/u.service":           "",
		"user.slice/u.service/app.scope": "",
	})
	mi := "30 1 0:26 / " + root + " rw - cgroup2 cgroup2 rw\n"
	// Only the service and below are writable (systemd delegation).
	writable := func(p string) bool { return strings.HasPrefix(p, filepath.Join(root, "user.slice/u.service")) }
	env := detectCgroupsFrom(mi, "0::/user.slice/u.service/app.scope\n", writable)
	if env.v2 != "" {
		t.Errorf("picked %q although no writable ancestor delegates controllers", env.v2)
	}
	// Now the service delegates memory and pids to its children.
	os.WriteFile(filepath.Join(root, "user.slice/u.service/cgroup.subtree_control"), []byte("memory pids"), 0o644)
	env = detectCgroupsFrom(mi, "0::/user.slice/u.service/app.scope\n", writable)
	if env.v2 != filepath.Join(root, "user.slice/u.service") || !env.has("memory") || !env.has("pids") || env.has("cpu") {
		t.Errorf("v2 = %q %v", env.v2, env.v2Ctrl)
	}
	// As root everything is writable: the nearest delegating ancestor, never the own group.
	env = detectCgroupsFrom(mi, "0::/user.slice/u.service/app.scope\n", func(string) bool { return true })
	if env.v2 != filepath.Join(root, "user.slice/u.service") {
		t.Errorf("as root: %q", env.v2)
	}
	// A process in the root group (containers, bare hosts) uses the root.
	env = detectCgroupsFrom(mi, "0::/\n", func(string) bool { return true })
	if env.v2 != root || !env.has("cpu") {
		t.Errorf("root group: %q %v", env.v2, env.v2Ctrl)
	}
}

func TestDetectCgroupsV1(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"pids", "memory/job", "cpu,cpuacct", "unified"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	mi := strings.Join([]string{
		"31 25 0:27 / " + root + "/pids rw - cgroup cgroup rw,pids",
		"32 25 0:28 / " + root + "/memory rw - cgroup cgroup rw,memory",
		"33 25 0:29 / " + root + "/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct",
		"34 25 0:30 / " + root + "/unified rw - cgroup2 cgroup2 rw",
	}, "\n")
	self := "8:pids:/\n4:memory:/job\n1:cpu,cpuacct:/\n0::/\n"
	env := detectCgroupsFrom(mi, self, func(p string) bool { return !strings.Contains(p, "cpu") })
	if env.v2 != "" {
		t.Errorf("empty unified hierarchy chosen: %q", env.v2)
	}
	if env.v1["pids"] != filepath.Join(root, "pids") || env.v1["memory"] != filepath.Join(root, "memory/job") {
		t.Errorf("v1 = %v", env.v1)
	}
	if env.has("cpu") {
		t.Errorf("unwritable cpu hierarchy used")
	}
	// A hierarchy mounted from a sub-group (containers): paths map through its root.
	mi = "31 25 0:27 /outer " + root + "/pids rw - cgroup cgroup rw,pids"
	env = detectCgroupsFrom(mi, "8:pids:/outer/inner\n", func(string) bool { return true })
	if env.v1["pids"] != filepath.Join(root, "pids/inner") {
		t.Errorf("mapped: %v", env.v1)
	}
}

func readTrim(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestCgroupLayoutV2 checks, on a fake unified hierarchy, where the limits go:
// the session bounds everything (pids with the reserve, CPU), the agent group
// bounds the commands (pids, memory), the sandbox's own processes go to sys.
func TestCgroupLayoutV2(t *testing.T) {
	root := fakeCgroupFS(t, map[string]string{"": "cpu memory pids"})
	env := cgroupEnv{v2: root, v2Ctrl: map[string]bool{"cpu": true, "memory": true, "pids": true}}
	sess := filepath.Join(root, "fullsend-x")
	cs, err := newCgroupsIn(env, "x", sandbox.Limits{Pids: 50, MemoryBytes: 1 << 30, CPUs: 1.5}.Resolved())
	if err != nil {
		t.Fatal(err)
	}
	if cs.sys != filepath.Join(sess, "sys") || len(cs.agents) != 1 || cs.agents[0] != filepath.Join(sess, "agent") {
		t.Fatalf("layout: sys %q agents %v", cs.sys, cs.agents)
	}
	if got := readTrim(t, filepath.Join(sess, "pids.max")); got != "306" {
		t.Errorf("session pids.max %s, want Pids+PidsReserve = 306", got)
	}
	if got := readTrim(t, filepath.Join(sess, "agent", "pids.max")); got != "50" {
		t.Errorf("agent pids.max %s", got)
	}
	if got := readTrim(t, filepath.Join(sess, "agent", "memory.max")); got != "1073741824" {
		t.Errorf("agent memory.max %s", got)
	}
	if got := readTrim(t, filepath.Join(sess, "cpu.max")); got != "150000 100000" {
		t.Errorf("session cpu.max %s", got)
	}
	for _, k := range []string{"pids", "memory", "cpu"} {
		if cs.enforced[k] == "" {
			t.Errorf("%s not reported enforced", k)
		}
	}
}

// TestCgroupLayoutV1 runs where this process may create v1 groups (root).
func TestCgroupLayoutV1(t *testing.T) {
	env := detectCgroups()
	if env.v2 != "" || len(env.v1) == 0 {
		t.Skip("no writable cgroup v1 hierarchy here")
	}
	cs, err := newCgroupsIn(env, "layouttest"+strconv.Itoa(os.Getpid()), sandbox.Limits{Pids: 40, MemoryBytes: 256 << 20}.Resolved())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := cs.remove(); err != nil {
			t.Errorf("remove: %v", err)
		}
	}()
	if d, ok := env.v1["pids"]; ok {
		sess := filepath.Join(d, "fullsend-layouttest"+strconv.Itoa(os.Getpid()))
		if readTrim(t, filepath.Join(sess, "pids.max")) != "296" || readTrim(t, filepath.Join(sess, "agent", "pids.max")) != "40" {
			t.Errorf("pids: session %s agent %s", readTrim(t, filepath.Join(sess, "pids.max")), readTrim(t, filepath.Join(sess, "agent", "pids.max")))
		}
	}
	eg, err := cs.newExec()
	if err != nil {
		t.Fatal(err)
	}
	if len(eg.procs) != len(cs.agents) || (env.has("memory") && eg.mem == "") {
		t.Errorf("exec group: %d procs for %d agent groups, mem %q", len(eg.procs), len(cs.agents), eg.mem)
	}
	if n := eg.oomKills(); n != 0 {
		t.Errorf("fresh exec group reports %d OOM kills", n)
	}
	eg.remove()
	for _, d := range eg.dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s not removed", d)
		}
	}
}

func TestLimitSupportFallbacks(t *testing.T) {
	none := limitSupport(cgroupEnv{v1: map[string]string{}})
	if none.Memory.Level != sandbox.Weaker || none.Pids.Level != sandbox.Weaker || none.CPU.Level != sandbox.NotEnforced {
		t.Errorf("without cgroups: %+v", none)
	}
	if d := none.Downgrades(); len(d) != 3 || !strings.Contains(d[0], "RLIMIT_AS") {
		t.Errorf("downgrades %q", d)
	}
	all := limitSupport(cgroupEnv{v1: map[string]string{"pids": "/x", "memory": "/y", "cpu": "/z"}})
	if d := all.Downgrades(); len(d) != 0 {
		t.Errorf("with every controller: downgrades %q", d)
	}
	if !strings.Contains(all.Memory.How, "cgroup v1") || all.Tmp.Level != sandbox.Enforced || all.Output.How == "" {
		t.Errorf("with every controller: %+v", all)
	}
}

// TestCgroupsFailureLeavesNothing: a session whose groups fail half-way
// (here an invalid memory limit, refused by the kernel after the groups
// exist) leaves no group behind. Needs a writable memory controller.
func TestCgroupsFailureLeavesNothing(t *testing.T) {
	env := detectCgroups()
	if !env.has("memory") {
		t.Skip("no writable memory controller here")
	}
	id := "failtest" + strconv.Itoa(os.Getpid())
	cs, err := newCgroupsIn(env, id, sandbox.Limits{Pids: 40, MemoryBytes: -5, CPUs: 1}.Resolved())
	if err == nil {
		cs.remove()
		t.Fatal("memory limit -5 accepted")
	}
	if cs != nil {
		t.Errorf("a cgroupSet returned with the error %v", err)
	}
	parents := []string{env.v2}
	if env.v2 == "" {
		parents = nil
		for _, d := range env.v1 {
			parents = append(parents, d)
		}
	}
	for _, p := range parents {
		if _, err := os.Stat(filepath.Join(p, "fullsend-"+id)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left behind (%v)", filepath.Join(p, "fullsend-"+id), err)
		}
	}
}
