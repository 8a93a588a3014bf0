package cli

import (
	"encoding/json"
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
)

func init() { register(newCacheCmd) }

func newCacheCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "List, verify and clean the cache of fetched resources",
		Long: `The cache holds every fetched remote resource under its sha256, in
$FULLSEND_CACHE_DIR or <workspace>/.fullsend-cache. Entries are immutable and
re-verified on every read; a corrupt entry is removed and fetched again.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown cache command %q (want ls, verify or clean)", args[0])}
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newCacheLsCmd(env), newCacheVerifyCmd(env), newCacheCleanCmd(env))
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
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List cache entries (without verifying them)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
				b, err := json.MarshalIndent(out, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(env.Stdout, "%s\n", b)
				return err
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
