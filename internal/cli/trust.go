package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/scan"
	"github.com/fullsend-ai/fullsend/internal/trust"
)

// trustState is a command's trust flags and, once made, its decision
// (package trust holds the rule; this file only wires it).
type trustState struct {
	ref        string // --trusted-ref
	worktree   bool   // --trust-worktree
	targetRepo string // run's --target-repo

	once     sync.Once
	decision *trust.Decision
	err      error
	configs  map[string]configResult // layerConfig's, per repository layer
	warned   map[string]bool
}

// addTrustFlags adds --trusted-ref and --trust-worktree to cmd.
func (e *Env) addTrustFlags(cmd *cobra.Command) {
	ts := e.trustState()
	cmd.Flags().StringVar(&ts.ref, "trusted-ref", "", "read the org fullsend dir from git objects at `REF` (e.g. origin/main) of the repository it lives in, never from the work tree; the work tree's copy is a repository layer on top (docs/trust.md)")
	e.addTrustWorktreeFlag(cmd)
}

// addTrustWorktreeFlag adds --trust-worktree alone (commands that write
// into the fullsend dir, or read only its settings).
func (e *Env) addTrustWorktreeFlag(cmd *cobra.Command) {
	ts := e.trustState()
	cmd.Flags().BoolVar(&ts.worktree, "trust-worktree", false, "trust fullsend dirs inside the target repository's work tree as the org layer (host scripts, host services, scan acceptances); for a repository you own, never in CI on pull requests (also "+trust.EnvTrustWorktree+"=1)")
}

func (e *Env) trustState() *trustState {
	e.trustMu.Lock()
	defer e.trustMu.Unlock()
	if e.trustSt == nil {
		e.trustSt = &trustState{}
	}
	return e.trustSt
}

// trustDecision makes the command's trust decision once (trust.Decide);
// with --trusted-ref the org layer becomes the dir extracted from git, and
// --fullsend-dir names it from then on.
func (e *Env) trustDecision(ctx context.Context) (*trust.Decision, error) {
	ts := e.trustState()
	ts.once.Do(func() {
		d, err := trust.Decide(ctx, trust.Options{
			FullsendDir: e.FullsendDir, TargetRepo: ts.targetRepo, TrustedRef: ts.ref,
			TrustWorktree: ts.worktree || e.Getenv(trust.EnvTrustWorktree) == "1",
		})
		ts.decision, ts.err = d, err
		if err != nil {
			return
		}
		switch d.Mode {
		case trust.ModeWorktree:
			e.notef("trusting the work tree (--trust-worktree or %s=1): fullsend dirs inside it are the org layer, host scripts and host services included", trust.EnvTrustWorktree)
		case trust.ModeTrustedRef:
			e.FullsendDir = d.OrgDir
		}
	})
	return ts.decision, ts.err
}

// closeTrust removes what the decision extracted (run of root.go calls it
// when the command ends).
func (e *Env) closeTrust() {
	if ts := e.trustSt; ts != nil {
		ts.decision.Close()
	}
}

// trustedHarnessPath maps, with --trusted-ref, a harness file in the work
// tree's copy of the fullsend dir to the org layer's file of the same
// relative path when their bytes are equal (an unchanged org harness runs
// as the org's); a changed or new one stays a repository-layer file.
func trustedHarnessPath(d *trust.Decision, p string) (string, string, bool) {
	if d == nil || d.Mode != trust.ModeTrustedRef || !pathWithin(p, d.WorktreeFullsendDir) {
		return "", "", false
	}
	rel, err := filepath.Rel(d.WorktreeFullsendDir, p)
	if err != nil {
		return "", "", false
	}
	org := filepath.Join(d.OrgDir, rel)
	a, err1 := os.ReadFile(p)
	b, err2 := os.ReadFile(org)
	if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
		return "", "", false
	}
	root := d.OrgDir
	if r := harness.FindRoot(org); pathWithin(r, d.OrgDir) {
		root = r
	}
	return org, root, true
}

// layerConfig is the configuration in force for the fullsend dir root
// (trust.Decision.Config): a repository layer's config.yaml applied over
// the org layer's under the layer table.
func (e *Env) layerConfig(root string) (*config.Config, error) {
	d, err := e.trustDecision(context.Background())
	if err != nil {
		return nil, err
	}
	if !d.IsRepoLayer(root) {
		return e.loadOwnConfig(root)
	}
	ts := e.trustState()
	e.trustMu.Lock()
	defer e.trustMu.Unlock()
	if r, ok := ts.configs[root]; ok {
		return r.cfg, r.err
	}
	cfg, notices, err := d.Config(root, e.loadOwnConfig)
	for _, n := range notices {
		e.notef("%s", n)
	}
	if ts.configs == nil {
		ts.configs = map[string]configResult{}
	}
	ts.configs[root] = configResult{cfg, err}
	return cfg, err
}

// harnessTrust is what loading the harness of t needs from
// the decision: the org layer beneath a repository layer, and the check
// of the fields a repository layer may not set.
func (e *Env) harnessTrust(t HarnessTarget) ([]string, func(*harness.Harness) error) {
	d, err := e.trustDecision(context.Background())
	if err != nil || !t.RepoLayer {
		return nil, nil
	}
	var layers []string
	if d.IsRepoLayer(t.Root) && d.OrgDir != "" && d.OrgDir != t.Root {
		layers = []string{d.OrgDir}
	}
	return layers, trust.CheckRepoHarness
}

// acceptances loads the scan acceptances honoured for the fullsend dir
// root: the org layer's, never a repository layer's (a warning names one
// that is ignored).
func (e *Env) acceptances(root string) (*scan.Acceptances, error) {
	d, err := e.trustDecision(context.Background())
	if err != nil {
		return nil, err
	}
	dir, warn := d.AcceptDir(root)
	if warn != "" {
		e.warnOnce(warn)
	}
	if dir == "" {
		return nil, nil
	}
	return scan.LoadAcceptances(filepath.Join(dir, scan.AcceptFile))
}

// warnOnce prints a warning once per command.
func (e *Env) warnOnce(msg string) {
	ts := e.trustState()
	e.trustMu.Lock()
	seen := ts.warned[msg]
	if ts.warned == nil {
		ts.warned = map[string]bool{}
	}
	ts.warned[msg] = true
	e.trustMu.Unlock()
	if !seen {
		e.warnf("%s", msg)
	}
}

// runTrust makes the trust decision of run or chat, whose --target-repo
// is untrusted too; a conflict of the flags is bad usage.
func (e *Env) runTrust(cmd *cobra.Command, targetRepo string) (*trust.Decision, error) {
	ts := e.trustState()
	if ts.ref != "" && (ts.worktree || e.Getenv(trust.EnvTrustWorktree) == "1") {
		return nil, usageError{fmt.Errorf("--trusted-ref and --trust-worktree (or %s=1): choose one", trust.EnvTrustWorktree)}
	}
	ts.targetRepo = targetRepo
	return e.trustDecision(cmd.Context())
}
