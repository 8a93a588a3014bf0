//go:build linux

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// hostVarRe finds the ${VAR} host-file sources of a harness, which the
// code row must point at files for the run to start.
var hostVarRe = regexp.MustCompile(`(?m)^\s*-?\s*src:\s*"?\$\{([A-Za-z_][A-Za-z0-9_]*)\}"?\s*$`)

// corpusDir finds the agents library: -corpus, $FULLSEND_CORPUS, or
// ../shared/corpus/fullsend-agents beside the source tree.
func (b *bench) corpusDir() (string, error) {
	dir := b.corpus
	if dir == "" {
		dir = os.Getenv("FULLSEND_CORPUS")
	}
	if dir == "" {
		dir = filepath.Join(b.repo, "..", "shared", "corpus", "fullsend-agents")
	}
	if st, err := os.Stat(filepath.Join(dir, "harness", "code.yaml")); err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("no agents library with harness/code.yaml at %s (set -corpus or FULLSEND_CORPUS)", dir)
	}
	return filepath.Abs(dir)
}

// code measures `fullsend run` of the corpus's code harness as a whole
// process, with the script runtime standing in for the agent (one step
// writing a valid result), and reports the time around the agent: the
// process's wall time minus its agent phases (from `run --json`).
func (b *bench) code() error {
	const what = "`fullsend run` of the corpus code harness"
	lib, err := b.corpusDir()
	if err != nil {
		b.fail(what, err)
		return nil
	}
	c, err := b.codeSetup(lib)
	if err != nil {
		return err
	}
	var agents []time.Duration
	c.stdout = func(out []byte) error {
		d, err := agentTime(out)
		agents = append(agents, d)
		return err
	}
	x, _, err := pair(b.n, job{cmds: []*cmdSpec{c}}, nil)
	if err != nil {
		b.fail(what, err)
		return nil
	}
	// pair's first run is a warm-up; its agent time is not a sample.
	agents = agents[1:]
	over := make(series, len(x))
	for i := range x {
		over[i] = sample{wall: x[i].wall - agents[i]}
	}
	b.add(row{what + " (script runtime standing in for the agent, local sandbox), whole process", "≤ 200 ms over the agent",
		fmt.Sprintf("%s over the agent; %s in all; %s (own process and its children); %s", wallText(over), wallText(x), cpuText(x), rssText(x)),
		"`fullsend run --json --runtime script --script agent.yaml --target-repo repo harness/code.yaml` (wall time minus the agent phases)"})
	return nil
}

// codeSetup copies the library into the scratch tree (CI's copy is read
// only), writes the stand-in agent script, a target repository and the host
// files the harness names through ${VAR}, and returns the command.
func (b *bench) codeSetup(lib string) (*cmdSpec, error) {
	dir := filepath.Join(b.tmp, "code")
	if err := copyTree(lib, filepath.Join(dir, "lib")); err != nil {
		return nil, err
	}
	files := map[string]string{
		"agent.yaml":        "steps:\n  - write_result: {value: {target_branch: main}}\n",
		"repo/README.md":    "# repo\n",
		"repo/.git/HEAD":    "ref: refs/heads/main\n",
		"hostfiles/.keep":   "",
		"ws/.fullsend-keep": "",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			return nil, err
		}
	}
	h, err := os.ReadFile(filepath.Join(lib, "harness", "code.yaml"))
	if err != nil {
		return nil, err
	}
	env := slices.Clip(b.baseEnv)
	for _, m := range hostVarRe.FindAllStringSubmatch(string(h), -1) {
		p := filepath.Join(dir, "hostfiles", m[1])
		if err := os.WriteFile(p, []byte(`{"placeholder": true}`+"\n"), 0o600); err != nil {
			return nil, err
		}
		env = append(env, m[1]+"="+p)
	}
	return &cmdSpec{args: []string{b.bin, "run", "--json", "--fullsend-dir", "lib", "--workspace", "ws",
		"--runtime", "script", "--script", "agent.yaml", "--target-repo", "repo", "lib/harness/code.yaml"},
		dir: dir, env: env}, nil
}

// agentTime sums the agent phases of a `run --json` result and checks that
// the run succeeded.
func agentTime(out []byte) (time.Duration, error) {
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Phases []struct {
			Name       string  `json:"name"`
			DurationMS float64 `json:"duration_ms"`
		} `json:"phases"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return 0, fmt.Errorf("run --json output: %v", err)
	}
	if r.Status != "succeeded" {
		return 0, fmt.Errorf("run %s: %s", r.Status, r.Error)
	}
	var d time.Duration
	n := 0
	for _, p := range r.Phases {
		if strings.HasPrefix(p.Name, "agent[") {
			d += time.Duration(p.DurationMS * float64(time.Millisecond))
			n++
		}
	}
	if n == 0 {
		return 0, errors.New("run --json: no agent phase")
	}
	return d, nil
}
