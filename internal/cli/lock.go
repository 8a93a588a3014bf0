package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/lock"
	"github.com/fullsend-ai/fullsend/internal/resolve"
)

func init() { register(newLockCmd) }

// testOnlyNow is the clock of `fullsend lock`.
var testOnlyNow = time.Now

func newLockCmd(env *Env) *cobra.Command {
	var f ResolveFlags
	var update bool
	cmd := &cobra.Command{
		Use:   "lock [--update] [--frozen] [--offline] HARNESS",
		Short: "Record every resolved dependency of a harness in <fullsend-dir>/lock.yaml",
		Long: `lock resolves HARNESS (every forge overlay included) and records the harness
file's sha256 and every dependency (url or path, sha256, type, files of
directories, transitive dependencies) in <fullsend-dir>/lock.yaml.

Without --update an existing entry is only confirmed: if the resolution differs
from it, lock fails and leaves the file alone. --update re-resolves and
rewrites the entry. --frozen fails when the file would change. Unchanged
entries keep their timestamps, so locking twice writes identical bytes. The
file is replaced atomically; on any failure the previous file is intact.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := filepath.Join(env.FullsendDir, lock.FileName)
			old, err := readLock(path)
			if err != nil {
				return err
			}
			rf := f
			rf.Frozen = false
			res, err := env.ResolveHarness(cmd.Context(), cmd, args[0], rf, false)
			if err != nil {
				return err
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
			switch {
			case unchanged && old != nil:
				fmt.Fprintf(env.Stdout, "%s: lock entry %q is up to date\n", lock.FileName, key)
				return nil
			case f.Frozen:
				return fmt.Errorf("%s: entry %q for %s is missing or out of date (--frozen); run `%s`", path, key, res.Source, resolve.FixCommand(res.Source))
			case prev != nil && !update:
				return fmt.Errorf("%s: entry %q for %s is out of date; run `%s` to re-resolve it", path, key, res.Source, resolve.FixCommand(res.Source))
			}
			lf.Put(key, entry, now.Format(time.RFC3339))
			if err := lock.Write(path, lf); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "%s: wrote entry %q for %s (%d resources)\n", path, key, res.Source, len(res.Graph.Nodes))
			return nil
		},
	}
	f.add(cmd, false)
	cmd.Flags().BoolVar(&update, "update", false, "re-resolve and rewrite the harness's entry")
	return cmd
}
