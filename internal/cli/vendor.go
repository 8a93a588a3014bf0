package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/atomicfile"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/lock"
	"github.com/fullsend-ai/fullsend/internal/pin"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/resolve"
)

func newVendorCmd(env *Env) *cobra.Command {
	var asJSON, update, base bool
	cmd := &cobra.Command{
		Use:   "vendor [--json] HARNESS FIELD URL | vendor --base [--json] HARNESS [FIELD…] | vendor --update [--json] HARNESS",
		Short: "Copy a remote script into the fullsend dir, recorded with its URL and sha256 in lock.yaml",
		Long: `Scripts run on the host, so a harness names them as local files only. vendor
HARNESS FIELD URL (FIELD: ` + pin.ScriptFieldNames() + `) resolves the URL's branch or
tag to a commit through the forge API, fetches the script at that commit,
scans it, copies it to vendor/HOST/OWNER/REPO/PATH in the fullsend dir, points
FIELD of the harness at that copy, and records path, commit URL, ref and
sha256 under vendor: in lock.yaml. resolve and run then refuse the harness if
the vendored file no longer hashes to the recorded sha256, with or without
--frozen.

vendor --update HARNESS fetches every vendored script of the harness again at
its ref's current commit, rewrites the copies that changed and their lock
records: the reviewable change is the script diff plus the lock diff.

vendor --base HARNESS [FIELD…] vendors the scripts a remote base of the
harness names and the harness leaves to it (default: all of them), at the URL
the composed base names, without writing any field of the harness: the
vendor: entry alone serves the base's field (audited as base_script). Run it
again after the base moves (pin --update); a copy that is up to date is left
alone.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if base && update {
				return usageError{errors.New("vendor: --base and --update do not go together; after the base moves, run vendor --base again")}
			}
			if base {
				if len(args) < 1 {
					return usageError{errors.New("vendor --base: want HARNESS [FIELD…]")}
				}
				return nil
			}
			if update && len(args) != 1 {
				return usageError{errors.New("vendor --update: want HARNESS")}
			}
			if !update && len(args) != 3 {
				return usageError{fmt.Errorf("vendor: want HARNESS FIELD URL, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if update {
				return env.vendorUpdate(cmd, args[0], asJSON)
			}
			if base {
				return env.vendorBase(cmd, args[0], args[1:], asJSON)
			}
			return env.vendorOne(cmd, args[0], args[1], args[2], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVar(&update, "update", false, "refresh every vendored script of the harness at its ref's current commit")
	cmd.Flags().BoolVar(&base, "base", false, "vendor the scripts the harness's remote base names, writing no field of the harness")
	return cmd
}

// vendorPath is where the script at the forge URL u is copied, relative to
// the fullsend dir: vendor/HOST/OWNER/REPO/PATH (a port joined to the host
// with "_").
func vendorPath(u string, forges []config.Forge) (string, error) {
	loc, err := forge.Parse(u, forges)
	if err != nil {
		return "", err
	}
	hostport, _, _ := strings.Cut(strings.TrimPrefix(loc.URL, "https://"), "/")
	host := strings.ReplaceAll(hostport, ":", "_")
	rel := strings.Join([]string{"vendor", host, loc.Owner, loc.Repo, loc.Path}, "/")
	clean, err := ref.CleanLocal(rel)
	if err != nil || clean != rel {
		return "", fmt.Errorf("vendor %s: %q is not a clean path inside the fullsend dir", u, rel)
	}
	return rel, nil
}

// vendorWrite replaces the vendored copy at rel and returns a function
// restoring what was there before (used when the harness then fails to
// resolve, so nothing is left half-done).
func vendorWrite(root, rel string, content []byte) (func(), error) {
	abs := filepath.Join(root, filepath.FromSlash(rel))
	old, err := os.ReadFile(abs)
	existed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(abs, content, 0o755); err != nil {
		return nil, err
	}
	return func() {
		if existed {
			_ = atomicfile.Write(abs, old, 0o755)
		} else {
			_ = os.Remove(abs)
		}
	}, nil
}

type vendorResult struct {
	Field string `json:"field"`
	Path  string `json:"path"`
	pinResult
}

type vendorReport struct {
	Harness string         `json:"harness"`
	Scripts []vendorResult `json:"scripts"`
	Lock    string         `json:"lock"`
}

func (e *Env) vendorOne(cmd *cobra.Command, harnessArg, fieldName, rawURL string, asJSON bool) error {
	f, err := pin.LookupScriptField(fieldName)
	if err != nil {
		return usageError{err}
	}
	pt, rf, p, err := e.pinFetch(cmd, harnessArg, rawURL, f.Kind, "vendor: %q is not an https URL")
	if err != nil {
		return err
	}
	rel, err := vendorPath(p.URL, pt.cfg.Forges)
	if err != nil {
		return err
	}
	if err := pt.doc.Set(f, rel, ""); err != nil {
		return fmt.Errorf("%s: %w", displayPath(pt.Path), err)
	}
	restore, err := vendorWrite(pt.Root, rel, p.Content)
	if err != nil {
		return err
	}
	v := lock.Vendored{Path: rel, URL: p.URL, SHA256: string(p.SHA256)}
	if p.Ref != p.Commit {
		v.Ref = p.Ref
	}
	lockMsg, err := e.commitHarness(cmd.Context(), cmd, pt, pt.doc.Bytes(), v)
	if err != nil {
		restore()
		return err
	}
	rep := vendorReport{Harness: displayPath(pt.Path), Lock: lockMsg,
		Scripts: []vendorResult{{Field: f.Name, Path: rel, pinResult: pinResult{Field: f.Name, Requested: rf.URL, Ref: p.Ref, Changed: true, Pinned: p, Scan: scanSummary(p)}}}}
	e.finishProgress()
	if asJSON {
		return writeJSON(e.Stdout, rep)
	}
	fmt.Fprintf(e.Stdout, "vendored %s: %s\n", f.Name, rf.URL)
	writePinned(e, rep.Scripts[0].pinResult)
	fmt.Fprintf(e.Stdout, "  copied to %s; %s: %s\n  wrote %s; lock: %s\n", rel, f.Name, rel, rep.Harness, rep.Lock)
	return nil
}

func (e *Env) vendorUpdate(cmd *cobra.Command, harnessArg string, asJSON bool) error {
	pt, err := e.pinTarget(cmd, harnessArg)
	if err != nil {
		return err
	}
	lf, err := readLock(pt.LockPath())
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	rep := vendorReport{Harness: displayPath(pt.Path), Scripts: []vendorResult{}}
	var changed []lock.Vendored
	var restores []func()
	undo := func() {
		for _, r := range restores {
			r()
		}
	}
	for _, name := range strings.Split(pin.ScriptFieldNames(), ", ") {
		f, _ := pin.LookupScriptField(name)
		val := pt.doc.Value(f)
		if val == "" {
			continue
		}
		clean, err := ref.CleanLocal(val)
		if err != nil {
			continue
		}
		v := lf.FindVendored(clean)
		if v == nil || v.Ref == "" {
			continue
		}
		loc, err := forge.Parse(v.URL, pt.cfg.Forges)
		if err != nil {
			undo()
			return fmt.Errorf("%s: vendor entry %s: %w", displayPath(pt.LockPath()), v.Path, err)
		}
		oldCommit := loc.Ref
		loc.Ref = v.Ref
		if loc, err = loc.As(loc.Kind); err != nil {
			undo()
			return fmt.Errorf("%s: vendor entry %s: ref %q: %w", displayPath(pt.LockPath()), v.Path, v.Ref, err)
		}
		p, err := resolve.Pin(ctx, resolve.PinRequest{URL: loc.URL, Kind: f.Kind, Allowed: pt.cfg.AllowedRemoteResources}, pt.opts)
		if err != nil {
			undo()
			return fmt.Errorf("%s (%s): %w", v.Path, name, err)
		}
		r := vendorResult{Field: name, Path: v.Path, pinResult: pinResult{Field: name, Ref: v.Ref, OldCommit: oldCommit,
			OldSHA256: ref.Digest(v.SHA256), Pinned: p, Scan: scanSummary(p)}}
		r.Changed = p.URL != v.URL || string(p.SHA256) != v.SHA256
		if r.Changed {
			restore, err := vendorWrite(pt.Root, v.Path, p.Content)
			if err != nil {
				undo()
				return err
			}
			restores = append(restores, restore)
			changed = append(changed, lock.Vendored{Path: v.Path, URL: p.URL, Ref: v.Ref, SHA256: string(p.SHA256)})
		}
		rep.Scripts = append(rep.Scripts, r)
	}
	rep.Lock = "unchanged"
	if len(changed) > 0 {
		if rep.Lock, err = e.commitHarness(ctx, cmd, pt, pt.src, changed...); err != nil {
			undo()
			return err
		}
	}
	e.finishProgress()
	if asJSON {
		return writeJSON(e.Stdout, rep)
	}
	if len(rep.Scripts) == 0 {
		fmt.Fprintf(e.Stdout, "%s: no vendored script follows a branch or tag\n", rep.Harness)
		return nil
	}
	for _, r := range rep.Scripts {
		if !r.Changed {
			fmt.Fprintf(e.Stdout, "%s %s (%s): up to date at %s\n", r.Field, r.Path, r.Ref, r.Commit)
			continue
		}
		fmt.Fprintf(e.Stdout, "%s %s (%s): updated\n", r.Field, r.Path, r.Ref)
		writePinned(e, r.pinResult)
	}
	if len(changed) > 0 {
		fmt.Fprintf(e.Stdout, "lock: %s\n", rep.Lock)
	}
	return nil
}
