package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/lock"
	"github.com/fullsend-ai/fullsend/internal/resolve"
)

// testOnlyNow is the clock of `fullsend lock`.
var testOnlyNow = time.Now

func newLockCmd(env *Env) *cobra.Command {
	var f ResolveFlags
	var update bool
	cmd := &cobra.Command{
		Use:   "lock [--update] [--frozen] [--offline] HARNESS",
		Short: "Record every resolved dependency of a harness in lock.yaml of its fullsend dir",
		Long: `lock resolves HARNESS (every forge overlay included) and records the harness
file's sha256 and every dependency (url or path, sha256, type, files of
directories, transitive dependencies) in lock.yaml of the fullsend dir the
harness resolves against: --fullsend-dir, or the one inferred from the harness
location (so 'fullsend lock examples/hello/harness.yaml' writes
examples/hello/lock.yaml). resolve, run and graph read the same file. The
directory is created when missing. lock.yaml is meant to be committed.

Without --update an existing entry is only confirmed: if the resolution differs
from it, lock fails and leaves the file alone. --update re-resolves and
rewrites the entry. --frozen fails when the file would change. Unchanged
entries keep their timestamps, so locking twice writes identical bytes. The
file is replaced atomically; on any failure the previous file is intact.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := env.ResolveHarnessArg(cmd, args[0])
			if err != nil {
				return err
			}
			path := t.LockPath()
			old, err := readLock(path)
			if err != nil {
				return err
			}
			rf := f
			rf.Frozen = false
			rf.commits = true
			res, err := env.resolveTarget(cmd.Context(), cmd, t, rf, false)
			if err != nil {
				return err
			}
			if un := res.Unverified(); len(un) > 0 {
				// lock.yaml records URL→pin pairs: only ones a fetch confirmed.
				return fmt.Errorf("%s: not recording %s: sha256 %s is cached, but no fetch has confirmed that this URL serves it; run `%s` without --offline to confirm it", displayPath(path), un[0].URL, un[0].SHA256, lockCommand(cmd, t.Arg, update))
			}
			now := testOnlyNow().UTC()
			entry := resolve.LockEntry(res, now)
			lf := old
			if lf == nil {
				lf = &lock.File{Version: lock.Version}
			}
			key, prev := lf.Find(res.Source)
			if prev == nil {
				key = lf.Key(res.Source)
			}
			unchanged := entry.KeepTimes(prev)
			shown := displayPath(path)
			switch {
			case unchanged && old != nil:
				fmt.Fprintf(env.Stdout, "%s: lock entry %q is up to date\n", shown, key)
				return nil
			case f.Frozen:
				return fmt.Errorf("%s: entry %q for %s is missing or out of date (--frozen); run `%s`", shown, key, res.Source, lockCommand(cmd, t.Arg, prev != nil))
			case prev != nil && !update:
				return fmt.Errorf("%s: entry %q for %s is out of date; run `%s` to re-resolve it", shown, key, res.Source, lockCommand(cmd, t.Arg, true))
			}
			lf.Put(key, entry, now.Format(time.RFC3339))
			if err := lock.Write(path, lf); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "%s: wrote entry %q for %s (%d resources)\n", shown, key, res.Source, len(res.Graph.Nodes))
			return nil
		},
	}
	f.add(cmd, false)
	env.addTrustWorktreeFlag(cmd)
	cmd.Flags().BoolVar(&update, "update", false, "re-resolve and rewrite the harness's entry")
	return cmd
}

// lockCommand spells the `fullsend lock` command that writes (or with
// update refreshes) the lock entry of HARNESS arg, so that it works from
// the current directory: the argument as the user gave it, and
// --fullsend-dir when it was given.
func lockCommand(cmd *cobra.Command, arg string, update bool) string {
	parts := []string{"fullsend"}
	if fl := cmd.Flag("fullsend-dir"); fl != nil && fl.Changed {
		parts = append(parts, "--fullsend-dir", shellQuote(fl.Value.String()))
	}
	parts = append(parts, "lock")
	if update {
		parts = append(parts, "--update")
	}
	return strings.Join(append(parts, shellQuote(arg)), " ")
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain
// path characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@%+=,#") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// displayPath shows p relative to the current directory when it is below
// it, else as is.
func displayPath(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return p
}
