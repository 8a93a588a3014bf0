package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/cas"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/ocicache"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/resolve"
)

func newCacheCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "List, verify and clean the cache of fetched resources",
		Long: `The cache holds every fetched remote resource under its sha256, in
$FULLSEND_CACHE_DIR or <workspace>/.fullsend-cache. Entries are immutable and
re-verified on every read; a corrupt entry is removed and fetched again.

When config.yaml names a shared cache (cache.oci.repository, an OCI registry),
a cache miss asks the registry before the forge; 'cache push --from-lock'
fills it for a harness and 'cache ls --remote' lists it.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown cache command %q (want ls, verify, clean or push)", args[0])}
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newCacheLsCmd(env), newCacheVerifyCmd(env), newCacheCleanCmd(env), newCachePushCmd(env))
	return cmd
}

// cacheOpen opens the cache without creating it: a missing cache is empty.
func cacheOpen(env *Env) (*cas.Store, string, error) {
	dir := cas.DefaultDir(env.Workspace, env.Getenv)
	if _, err := os.Stat(filepath.Join(dir, "resources")); errors.Is(err, fs.ErrNotExist) {
		return nil, dir, nil
	} else if err != nil {
		return nil, dir, fmt.Errorf("cache %s: %w", dir, err)
	}
	s, err := cas.Open(dir)
	if err == nil {
		env.ignoreCache(dir)
	}
	return s, dir, err
}

type cacheEntryJSON struct {
	SHA256      string    `json:"sha256"`
	Type        string    `json:"type"`
	Size        int64     `json:"size"`
	LastUsed    time.Time `json:"last_used"`
	URL         string    `json:"url"`
	FetchTime   time.Time `json:"fetch_time"`
	ContentType string    `json:"content_type,omitempty"`
	Path        string    `json:"path"`
}

func newCacheLsCmd(env *Env) *cobra.Command {
	var asJSON, remote bool
	cmd := &cobra.Command{
		Use:   "ls [--remote] [--json]",
		Short: "List cache entries (without verifying them)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if remote {
				return cacheLsRemote(cmd, env, asJSON)
			}
			s, _, err := cacheOpen(env)
			if err != nil {
				return err
			}
			var entries []cas.Entry
			if s != nil {
				if entries, err = s.List(); err != nil {
					return err
				}
			}
			if asJSON {
				out := make([]cacheEntryJSON, 0, len(entries))
				for _, e := range entries {
					out = append(out, cacheEntryJSON{
						SHA256: string(e.Digest), Type: string(e.Meta.Type), Size: e.Size,
						LastUsed: e.LastUsed.UTC(), URL: e.Meta.URL, FetchTime: e.Meta.FetchTime,
						ContentType: e.Meta.ContentType, Path: e.Dir,
					})
				}
				return writeJSON(env.Stdout, out)
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "HASH\tTYPE\tSIZE\tLAST USED\tURL")
			for _, e := range entries {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Digest[:12], cacheOrDash(string(e.Meta.Type)),
					cacheFormatSize(e.Size), e.LastUsed.UTC().Format("2006-01-02 15:04:05Z"), cacheOrDash(e.Meta.URL))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array instead of a table")
	cmd.Flags().BoolVar(&remote, "remote", false, "list the shared cache (config.yaml cache.oci) instead of the local one")
	return cmd
}

func newCacheVerifyCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Re-hash every cache entry; remove and report corrupt ones (exit 1)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, dir, err := cacheOpen(env)
			if err != nil {
				return err
			}
			if s == nil {
				fmt.Fprintf(env.Stdout, "cache %s is empty\n", dir)
				return nil
			}
			entries, err := s.List()
			if err != nil {
				return err
			}
			problems, err := s.Verify()
			if err != nil {
				return err
			}
			for _, p := range problems {
				fmt.Fprintf(env.Stdout, "FAIL %s\n", oneLine(p.Error()))
			}
			if len(problems) > 0 {
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("cache %s: %d problem(s) among %d entries; corrupt entries were removed and will be fetched again", dir, len(problems), len(entries))}
			}
			fmt.Fprintf(env.Stdout, "verified %d entries in %s: all intact\n", len(entries), dir)
			return nil
		},
	}
}

func newCacheCleanCmd(env *Env) *cobra.Command {
	var maxSize string
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove cache entries (all, or least recently used beyond --max-size)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var bound int64
			if cmd.Flags().Changed("max-size") {
				var err error
				if bound, err = cacheParseSize(maxSize); err != nil {
					return usageError{fmt.Errorf("--max-size: %w", err)}
				}
			}
			s, dir, err := cacheOpen(env)
			if err != nil {
				return err
			}
			if s == nil {
				fmt.Fprintf(env.Stdout, "cache %s is empty; nothing to remove\n", dir)
				return nil
			}
			removed, err := s.Clean(bound)
			var freed int64
			for _, e := range removed {
				freed += e.Size
				fmt.Fprintf(env.Stdout, "removed %s  %s  %s  %s\n", e.Digest[:12], cacheOrDash(string(e.Meta.Type)), cacheFormatSize(e.Size), cacheOrDash(e.Meta.URL))
			}
			fmt.Fprintf(env.Stdout, "freed %s (%d bytes) from %s\n", cacheFormatSize(freed), freed, dir)
			return err
		},
	}
	cmd.Flags().StringVar(&maxSize, "max-size", "", "evict least recently used entries until the cache is at most `SIZE` (bytes, or with a unit: 500MB, 1GiB, 10Ki; 0 removes everything)")
	return cmd
}

func cacheOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

var cacheSizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
	"ki": 1 << 10, "kib": 1 << 10, "mi": 1 << 20, "mib": 1 << 20, "gi": 1 << 30, "gib": 1 << 30, "ti": 1 << 40, "tib": 1 << 40,
}

// cacheParseSize reads a byte count: a non-negative number with an optional
// decimal (kB, MB, GB, TB; also K, M, G, T) or binary (KiB, MiB, GiB, TiB;
// also Ki, Mi, Gi, Ti) unit, case-insensitive. Fractions are rounded down
// to whole bytes.
func cacheParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := cacheSizeUnits[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("size %q: want a number of bytes, optionally with a unit such as 500MB or 1GiB", s)
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > math.MaxInt64/int64(mult) {
			return 0, fmt.Errorf("size %q: too large", s)
		}
		return n * int64(mult), nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %v", s, errors.Unwrap(err))
	}
	v := f * mult
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return int64(v), nil
}

// cacheFormatSize renders n bytes for people: "512 B", "1.5 KiB", "3.0 GiB".
func cacheFormatSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n)/1024, "KiB"
	for _, next := range []string{"MiB", "GiB", "TiB", "PiB", "EiB"} {
		if v < 1024 {
			break
		}
		v, u = v/1024, next
	}
	return fmt.Sprintf("%.1f %s", v, u)
}

// cacheRegistry opens the shared cache config.yaml names (cache.oci).
func cacheRegistry(env *Env, cfg *config.Config) (*ocicache.Cache, error) {
	reg, err := resolve.NewRegistry(cfg, env.Getenv, testOnlyFetchOptions)
	if err != nil {
		return nil, err
	}
	if reg == nil {
		where := cfg.Path
		if where == "" {
			where = "config.yaml (none found)"
		}
		return nil, fmt.Errorf("%s: no shared cache configured: set cache.oci.repository (HOST/PATH of an OCI registry repository)", where)
	}
	return reg, nil
}

type remoteEntryJSON struct {
	SHA256 string `json:"sha256"`
	Type   string `json:"type"`
	Tag    string `json:"tag"`
}

// cacheLsRemote lists what the shared cache holds (its tags; nothing is
// verified until it is read).
func cacheLsRemote(cmd *cobra.Command, env *Env, asJSON bool) error {
	cfg, err := env.LoadConfig()
	if err != nil {
		return err
	}
	reg, err := cacheRegistry(env, cfg)
	if err != nil {
		return err
	}
	items, err := reg.List(cmd.Context())
	if err != nil {
		return err
	}
	if asJSON {
		out := make([]remoteEntryJSON, 0, len(items))
		for _, it := range items {
			out = append(out, remoteEntryJSON{SHA256: string(it.Digest), Type: string(it.Type), Tag: it.Tag})
		}
		return writeJSON(env.Stdout, out)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "HASH\tTYPE\tTAG\n")
	for _, it := range items {
		fmt.Fprintf(tw, "%s\t%s\t%s:%s\n", it.Digest[:12], it.Type, reg.Name(), it.Tag)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "fullsend: %d entries in %s\n", len(items), reg.Name())
	return nil
}

func newCachePushCmd(env *Env) *cobra.Command {
	var fromLock, yes bool
	cmd := &cobra.Command{
		Use:   "push --from-lock [--yes] HARNESS",
		Short: "Fill the shared cache (cache.oci) with everything HARNESS's lock entry pins",
		Long: `push --from-lock resolves HARNESS against its lock.yaml entry, as
'resolve --frozen' does (the entry must exist and be up to date, so what is
pushed is exactly what the lock pins), fetching what the local cache lacks
(verified and scanned before it is cached), then pushes every remote resource
of the graph that the shared cache (config.yaml cache.oci) does not hold
intact: a file as the blob its sha256 names, a skill directory as the manifest
tagged tree-<hash>. A copy in the registry that fails verification is
replaced. Meant for a CI warm-up job; runners then read the registry instead
of the forge. Exit 1 when anything could not be pushed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !fromLock {
				return usageError{errors.New("cache push: --from-lock is required (the lock entry of HARNESS says what to push)")}
			}
			return cachePush(cmd, env, args[0], yes)
		},
	}
	cmd.Flags().BoolVar(&fromLock, "from-lock", false, "push what the lock entry of HARNESS pins")
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm an untrusted top-level harness URL without a prompt")
	return cmd
}

// cachePush is `cache push --from-lock HARNESS`.
func cachePush(cmd *cobra.Command, env *Env, arg string, yes bool) error {
	ctx := cmd.Context()
	t, err := env.ResolveHarnessArg(cmd, arg)
	if err != nil {
		return err
	}
	cfg, err := env.loadConfigFrom(t.Root)
	if err != nil {
		return err
	}
	reg, err := cacheRegistry(env, cfg)
	if err != nil {
		return err
	}
	lf, err := readLock(t.LockPath())
	if err != nil {
		return err
	}
	if lf == nil {
		return fmt.Errorf("%s: no lock file; run `%s` first", displayPath(t.LockPath()), lockCommand(cmd, t.Arg, false))
	}
	res, err := env.resolveTarget(ctx, cmd, t, ResolveFlags{Frozen: true, Yes: yes}, true)
	if err != nil {
		return err
	}
	env.finishProgress()
	store, err := cas.Open(cas.DefaultDir(env.Workspace, env.Getenv))
	if err != nil {
		return err
	}
	var pushed, present int
	var failures []string
	seen := map[ref.Digest]bool{}
	for _, n := range append([]*resolve.Node{res.Graph.Root}, res.Graph.Nodes...) {
		if !n.Remote || seen[n.SHA256] {
			continue
		}
		seen[n.SHA256] = true
		what := "file"
		if n.Type == cas.TypeDirectory {
			what = "tree"
		}
		status, err := cachePushOne(ctx, reg, store, n)
		if err != nil {
			failures = append(failures, err.Error())
			fmt.Fprintf(env.Stdout, "FAIL     %s %s  %s\n", what, n.SHA256[:12], n.URL)
			continue
		}
		if status == "present" {
			present++
		} else {
			pushed++
		}
		fmt.Fprintf(env.Stdout, "%-8s %s %s  %s\n", status, what, n.SHA256[:12], n.URL)
	}
	fmt.Fprintf(env.Stdout, "%s: %d pushed, %d already there, %d failed (%s)\n", reg.Name(), pushed, present, len(failures), res.Source)
	if len(failures) > 0 {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("cache push: %d of %d resources not pushed; first: %s", len(failures), pushed+present+len(failures), failures[0])}
	}
	return nil
}

// cachePushOne pushes node n's content from the local cache unless the
// registry holds an intact copy; it returns "present", "pushed" or
// "replaced" (a copy that failed verification was overwritten).
func cachePushOne(ctx context.Context, reg *ocicache.Cache, store *cas.Store, n *resolve.Node) (string, error) {
	var err error
	if n.Type == cas.TypeDirectory {
		_, err = reg.GetTree(ctx, n.SHA256)
	} else {
		_, err = reg.GetFile(ctx, n.SHA256)
	}
	status := "pushed"
	switch {
	case err == nil:
		return "present", nil
	case errors.Is(err, ocicache.ErrRefused):
		status = "replaced"
	case !errors.Is(err, ocicache.ErrNotFound):
		return "", err
	}
	if n.Type == cas.TypeDirectory {
		e, err := store.Get(n.SHA256)
		if err != nil {
			return "", err
		}
		files, err := cacheReadTree(e.TreePath)
		if err != nil {
			return "", err
		}
		// PutTree hashes what it pushes: a tree changed since Get is
		// refused, never pushed.
		return status, reg.PutTree(ctx, n.SHA256, files, n.URL)
	}
	_, b, err := store.ReadFile(n.SHA256)
	if err != nil {
		return "", err
	}
	return status, reg.PutFile(ctx, n.SHA256, b, n.URL)
}

// cacheReadTree reads the regular files below a verified tree entry.
func cacheReadTree(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("cache entry %s: %s is not a regular file", dir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	return files, err
}
