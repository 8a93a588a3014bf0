package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/atomicfile"
	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/harness"
	"github.com/fullsend-ai/fullsend/internal/lock"
	"github.com/fullsend-ai/fullsend/internal/pin"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/resolve"
)

func newPinCmd(env *Env) *cobra.Command {
	var asJSON, update, dryRun, vendorScripts bool
	cmd := &cobra.Command{
		Use:   "pin [--json] [--vendor] HARNESS FIELD URL | pin --update [--dry-run] [--json] [--vendor] HARNESS [FIELD…]",
		Short: "Pin a remote resource at a branch or tag into a harness (or move pinned references)",
		Long: `pin HARNESS FIELD URL resolves the branch or tag of the forge URL to a commit
through the forge API, fetches the resource at that commit (through the same
SSRF-safe client as resolve), computes its sha256 (a file) or tree hash (a
skill or plugin directory), scans it and caches it, and writes
URL-at-the-commit#sha256=HASH into FIELD of the harness file, editing only
that line (comments, order and formatting are kept). The branch or tag is
recorded in the line's comment, "# pin: REF", which pin --update follows.
FIELD is one of: ` + pin.FieldNames() + `; a list field gets the entry appended,
or the entry naming the same repository path replaced.

The URL's repository prefix is added to the harness's allowed_remote_resources
when missing. When the org config.yaml does not allow the URL, pin prints the
line the org must add and exits 1 without editing anything.

pin --update HARNESS [FIELD…] moves every reference carrying a "# pin: REF"
comment (of the FIELDs given, default all) to the commit REF names now, and
prints old -> new commit and hash per reference; --dry-run prints the
harness diff and writes nothing.

Before anything is written the edited harness is resolved completely (every
reference fetched or found in the cache, verified and scanned); the harness
is then replaced atomically, and its lock.yaml entry, when the harness is
locked, is rewritten to match.

A remote base's scripts (pre_script, post_script, validation_loop.script)
run on the host and are never fetched at run time: with --vendor, pin also
vendors the scripts the (new) base names, as vendor --base does, in the same
step; without it a base that names scripts not vendored yet is refused.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if update {
				if len(args) < 1 {
					return usageError{errors.New("pin --update: HARNESS is required")}
				}
				return nil
			}
			if dryRun {
				return usageError{errors.New("pin: --dry-run goes with --update")}
			}
			if len(args) != 3 {
				return usageError{fmt.Errorf("pin: want HARNESS FIELD URL, got %d arguments", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if update {
				return env.pinUpdate(cmd, args[0], args[1:], dryRun, vendorScripts, asJSON)
			}
			return env.pinOne(cmd, args[0], args[1], args[2], vendorScripts, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVar(&update, "update", false, `move every reference with a "# pin: REF" comment to REF's current commit`)
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "with --update: print the diff, write nothing")
	cmd.Flags().BoolVar(&vendorScripts, "vendor", false, "also vendor the scripts a remote base names (as vendor --base)")
	return cmd
}

// pinTarget is the harness file pin edits, with its org config.
type pinTarget struct {
	HarnessTarget
	cfg     *config.Config
	cfgPath string
	src     []byte
	doc     *pin.Doc
	opts    resolve.Options
}

func (e *Env) pinTarget(cmd *cobra.Command, arg string) (*pinTarget, error) {
	t, err := e.ResolveHarnessArg(cmd, arg)
	if err != nil {
		return nil, err
	}
	if t.Path == "" {
		return nil, usageError{fmt.Errorf("pin: %s: a harness URL cannot be edited; give a local harness file", ref.Redact(arg))}
	}
	cfg, err := e.loadConfigFrom(t.Root)
	if err != nil {
		return nil, err
	}
	src, err := os.ReadFile(t.Path)
	if err != nil {
		return nil, err
	}
	doc, err := pin.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Path, err)
	}
	opts, err := e.ResolveOptions(cfg, t.Root, ResolveFlags{})
	if err != nil {
		return nil, err
	}
	return &pinTarget{HarnessTarget: t, cfg: cfg, cfgPath: filepath.Join(t.Root, "config.yaml"), src: src, doc: doc, opts: opts}, nil
}

// orgRefusal is the error of a URL the org allowlist does not cover: it
// names the line to add to config.yaml.
func (p *pinTarget) orgRefusal(u string) error {
	return fmt.Errorf("pin: %s: not allowed by the org's allowed_remote_resources; nothing written; to allow it, the org adds the line %q to allowed_remote_resources: in %s",
		u, "- "+repoPrefix(u, p.cfg.Forges), displayPath(p.cfgPath))
}

// repoPrefix is the allowlist entry naming the repository of the forge
// URL u (forge.RepoPrefix).
func repoPrefix(u string, forges []config.Forge) string { return forge.RepoPrefix(u, forges) }

// pinResult is the outcome of one pinned reference (--json).
type pinResult struct {
	Field     string     `json:"field"`
	Requested string     `json:"requested,omitempty"`
	Ref       string     `json:"ref"`
	OldCommit string     `json:"old_commit,omitempty"`
	OldSHA256 ref.Digest `json:"old_sha256,omitempty"`
	Changed   bool       `json:"changed"`
	*resolve.Pinned
	Scan string `json:"scan"`
}

type pinReport struct {
	Harness      string      `json:"harness"`
	References   []pinResult `json:"references"`
	AllowedAdded string      `json:"allowed_added,omitempty"`
	Lock         string      `json:"lock"`
	DryRun       bool        `json:"dry_run,omitempty"`
	Diff         string      `json:"diff,omitempty"`
	// Vendored: the base scripts --vendor copied (vendor --base).
	Vendored []vendorResult `json:"vendored,omitempty"`
}

func scanSummary(p *resolve.Pinned) string {
	if len(p.Notices) == 0 {
		return "passed"
	}
	return fmt.Sprintf("passed with %d notice(s): %s", len(p.Notices), strings.Join(p.Notices, "; "))
}

// pinFetch is what pin and vendor do first: load the harness's target,
// check rawURL (an https URL, notLocal the usage error's format otherwise)
// against the org's allowlist, learn its pin (resolve.Pin: ref to commit,
// fetch, hash, scan, cache) and check the commit URL against the allowlist
// again. An allowlist refusal names the org config line to add.
func (e *Env) pinFetch(cmd *cobra.Command, harnessArg, rawURL, kind, notLocal string) (*pinTarget, ref.Ref, *resolve.Pinned, error) {
	pt, err := e.pinTarget(cmd, harnessArg)
	if err != nil {
		return nil, ref.Ref{}, nil, err
	}
	rf, err := ref.Parse(rawURL)
	if err != nil {
		return nil, ref.Ref{}, nil, err
	}
	if rf.Kind != ref.URL {
		return nil, ref.Ref{}, nil, usageError{fmt.Errorf(notLocal, rawURL)}
	}
	if _, ok := ref.MatchPrefix(rf.URL, pt.cfg.AllowedRemoteResources); !ok {
		return nil, ref.Ref{}, nil, pt.orgRefusal(rf.URL)
	}
	p, err := resolve.Pin(cmd.Context(), resolve.PinRequest{URL: rf.URL, Kind: kind, Allowed: pt.cfg.AllowedRemoteResources}, pt.opts)
	if err != nil {
		return nil, ref.Ref{}, nil, err
	}
	if _, ok := ref.MatchPrefix(p.URL, pt.cfg.AllowedRemoteResources); !ok {
		return nil, ref.Ref{}, nil, pt.orgRefusal(p.URL)
	}
	return pt, rf, p, nil
}

func (e *Env) pinOne(cmd *cobra.Command, harnessArg, fieldName, rawURL string, vendorScripts, asJSON bool) error {
	f, err := pin.LookupField(fieldName)
	if err != nil {
		return usageError{err}
	}
	pt, rf, p, err := e.pinFetch(cmd, harnessArg, rawURL, f.Kind, "pin: %q is not an https URL; a local path needs no pin")
	if err != nil {
		return err
	}
	idx, _ := ref.MatchPrefix(p.URL, pt.cfg.AllowedRemoteResources)
	comment := p.Ref
	if p.Ref == p.Commit {
		comment = "" // pinned at a commit: nothing to follow
	}
	res := pinResult{Field: f.Name, Requested: rf.URL, Ref: p.Ref, Changed: true, Pinned: p, Scan: scanSummary(p)}
	i := -1
	if f.List {
		i = sameResource(pt.doc, f, p.URL, pt.cfg.Forges)
	}
	if f.List {
		err = pt.doc.Put(f, i, p.Pinned, comment)
	} else {
		err = pt.doc.Set(f, p.Pinned, comment)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", displayPath(pt.Path), err)
	}
	rep := pinReport{Harness: displayPath(pt.Path)}
	if _, ok := ref.MatchPrefix(p.URL, pt.doc.Allowed()); !ok {
		add := repoPrefix(p.URL, pt.cfg.Forges)
		if _, ok := ref.MatchPrefix(add, pt.cfg.AllowedRemoteResources); !ok {
			add = pt.cfg.AllowedRemoteResources[idx]
		}
		if err := pt.doc.AddAllowed(add); err != nil {
			return fmt.Errorf("%s: allowed_remote_resources: %w", displayPath(pt.Path), err)
		}
		rep.AllowedAdded = add
	}
	rep.References = []pinResult{res}
	bv, err := e.pinVendor(cmd, pt, pt.doc.Bytes(), vendorScripts)
	if err != nil {
		return err
	}
	rep.Vendored = bv.results
	if rep.Lock, err = e.commitHarness(cmd.Context(), cmd, pt, pt.doc.Bytes(), bv.changed...); err != nil {
		bv.undo()
		return err
	}
	e.finishProgress()
	if asJSON {
		return writeJSON(e.Stdout, rep)
	}
	w := e.Stdout
	fmt.Fprintf(w, "pinned %s: %s\n", f.Name, rf.URL)
	writePinned(e, res)
	if rep.AllowedAdded != "" {
		fmt.Fprintf(w, "  allowed_remote_resources: added %s\n", rep.AllowedAdded)
	}
	writeBaseVendored(e, rep.Vendored)
	fmt.Fprintf(w, "  wrote %s; lock: %s\n", rep.Harness, rep.Lock)
	return nil
}

func writePinned(e *Env, r pinResult) {
	w := e.Stdout
	p := r.Pinned
	what := fmt.Sprintf("%d bytes", p.Size)
	if p.Type == "directory" {
		what = fmt.Sprintf("directory, %d files, %d bytes", p.Files, p.Size)
	}
	if r.OldCommit != "" {
		fmt.Fprintf(w, "  %s %s: commit %s -> %s, sha256 %s -> %s\n", r.Field, r.Ref, r.OldCommit, p.Commit, r.OldSHA256, p.SHA256)
	} else {
		fmt.Fprintf(w, "  %s -> commit %s\n", r.Ref, p.Commit)
		fmt.Fprintf(w, "  sha256 %s\n", p.SHA256)
	}
	fmt.Fprintf(w, "  fetched %s (%s) from the forge; scan: %s\n", p.URL, what, r.Scan)
}

// sameResource is the index of the list entry naming the same forge
// repository path as u at any ref, or -1.
func sameResource(doc *pin.Doc, f pin.Field, u string, forges []config.Forge) int {
	want, err := forge.Parse(u, forges)
	if err != nil {
		return -1
	}
	for _, en := range doc.Entries() {
		if en.Field.Name != f.Name {
			continue
		}
		rf, err := ref.Parse(en.Value)
		if err != nil || rf.Kind != ref.URL {
			continue
		}
		loc, err := forge.Parse(rf.URL, forges)
		if err == nil && loc.Forge.Host == want.Forge.Host && loc.Owner == want.Owner && loc.Repo == want.Repo && loc.Path == want.Path {
			return en.Index
		}
	}
	return -1
}

func (e *Env) pinUpdate(cmd *cobra.Command, harnessArg string, only []string, dryRun, vendorScripts, asJSON bool) error {
	for _, name := range only {
		if _, err := pin.LookupField(name); err != nil {
			return usageError{err}
		}
	}
	pt, err := e.pinTarget(cmd, harnessArg)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	rep := pinReport{Harness: displayPath(pt.Path), DryRun: dryRun, References: []pinResult{}}
	for _, en := range pt.doc.Entries() {
		if en.Ref == "" || (len(only) > 0 && !containsString(only, en.Field.Name)) {
			continue
		}
		rf, err := ref.Parse(en.Value)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", displayPath(pt.Path), en.Name, err)
		}
		loc, err := forge.Parse(rf.URL, pt.cfg.Forges)
		if rf.Kind != ref.URL || err != nil {
			return fmt.Errorf("%s: %s: %q follows %q but is not a forge URL", displayPath(pt.Path), en.Name, en.Value, en.Ref)
		}
		old := loc.Ref
		loc.Ref = en.Ref
		if loc, err = loc.As(loc.Kind); err != nil {
			return fmt.Errorf("%s: %s: ref %q: %w", displayPath(pt.Path), en.Name, en.Ref, err)
		}
		p, err := resolve.Pin(ctx, resolve.PinRequest{URL: loc.URL, Kind: en.Field.Kind, Allowed: pt.cfg.AllowedRemoteResources}, pt.opts)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", displayPath(pt.Path), en.Name, err)
		}
		if _, ok := ref.MatchPrefix(p.URL, pt.cfg.AllowedRemoteResources); !ok {
			return pt.orgRefusal(p.URL)
		}
		r := pinResult{Field: en.Name, Ref: en.Ref, OldCommit: old, OldSHA256: rf.Digest, Pinned: p, Scan: scanSummary(p)}
		r.Changed = p.URL != rf.URL || p.SHA256 != rf.Digest
		if r.Changed {
			if err := pt.doc.Replace(en, p.Pinned, en.Ref); err != nil {
				return fmt.Errorf("%s: %s: %w", displayPath(pt.Path), en.Name, err)
			}
		}
		rep.References = append(rep.References, r)
	}
	newSrc := pt.doc.Bytes()
	rep.Diff = pin.Diff(pt.src, newSrc)
	switch {
	case rep.Diff == "":
		rep.Lock = "unchanged"
	case dryRun:
		rep.Lock = "not written (--dry-run)"
	default:
		bv, err := e.pinVendor(cmd, pt, newSrc, vendorScripts)
		if err != nil {
			return err
		}
		rep.Vendored = bv.results
		if rep.Lock, err = e.commitHarness(ctx, cmd, pt, newSrc, bv.changed...); err != nil {
			bv.undo()
			return err
		}
	}
	e.finishProgress()
	if asJSON {
		return writeJSON(e.Stdout, rep)
	}
	w := e.Stdout
	if len(rep.References) == 0 {
		fmt.Fprintf(w, "%s: no reference carries a \"# pin: REF\" comment\n", rep.Harness)
		return nil
	}
	for _, r := range rep.References {
		if !r.Changed {
			fmt.Fprintf(w, "%s (%s): up to date at %s\n", r.Field, r.Ref, r.Commit)
			continue
		}
		fmt.Fprintf(w, "%s (%s): moved\n", r.Field, r.Ref)
		writePinned(e, r)
	}
	if dryRun {
		if rep.Diff != "" {
			fmt.Fprintf(w, "--- %s\n+++ %s (--dry-run: not written)\n%s", rep.Harness, rep.Harness, rep.Diff)
		}
		return nil
	}
	if rep.Diff != "" {
		writeBaseVendored(e, rep.Vendored)
		fmt.Fprintf(w, "wrote %s; lock: %s\n", rep.Harness, rep.Lock)
	}
	return nil
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// testOnlyPinHook, when set, runs after the edited harness resolved and
// before anything is written (tests: a failure there writes nothing).
var testOnlyPinHook func() error

// commitHarness resolves the edited harness newSrc completely (from a
// temporary file beside the harness, so relative references and the
// fullsend dir are the same), then replaces the harness atomically and,
// when lock.yaml has an entry for it, rewrites that entry from the same
// resolution. Nothing is written when the resolution fails. It returns
// what happened to the lock.
//
// vendored (from `fullsend vendor`) are recorded under vendor: in the lock
// file, which is then written whether or not the harness is locked.
func (e *Env) commitHarness(ctx context.Context, cmd *cobra.Command, pt *pinTarget, newSrc []byte, vendored ...lock.Vendored) (string, error) {
	fi, err := os.Stat(pt.Path)
	if err != nil {
		return "", err
	}
	dir, base := filepath.Split(pt.Path)
	tmp, err := os.CreateTemp(dir, "."+strings.TrimSuffix(base, filepath.Ext(base))+".pin-*"+filepath.Ext(base))
	if err != nil {
		return "", err
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	_, err = tmp.Write(newSrc)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	t := pt.HarnessTarget
	t.Path = tmpName
	res, err := e.resolveTarget(ctx, cmd, t, ResolveFlags{vendored: vendored}, false)
	if err != nil {
		if errors.Is(err, harness.ErrExecutableRemote) {
			// A remote base's script: the fix is vendoring it.
			err = fmt.Errorf("%w (a script a remote base names is served only by a vendored copy: pin with --vendor, or run `fullsend vendor --base HARNESS` once the base is pinned)", err)
		}
		return "", fmt.Errorf("%s: the pinned harness does not resolve, nothing written: %w", displayPath(pt.Path), err)
	}
	source := path.Join(path.Dir(res.Source), filepath.Base(pt.Path))
	lockPath := pt.LockPath()
	lf, err := readLock(lockPath)
	if err != nil {
		return "", err
	}
	key, prev := lf.Find(source)
	if prev != nil && prev.SHA256 != string(ref.SHA256(pt.src)) {
		// The entry no longer describes the harness as it was: refreshing
		// it here would also approve edits nobody locked.
		return "", fmt.Errorf("%s: entry %q is out of date with %s already, nothing written; run `%s` first, then pin again",
			displayPath(lockPath), key, displayPath(pt.Path), lockCommand(cmd, pt.Arg, true))
	}
	if testOnlyPinHook != nil {
		if err := testOnlyPinHook(); err != nil {
			return "", err
		}
	}
	if !bytes.Equal(newSrc, pt.src) {
		if err := atomicfile.Write(pt.Path, newSrc, fi.Mode().Perm()); err != nil {
			return "", err
		}
	}
	if len(vendored) > 0 {
		if lf == nil {
			lf = &lock.File{Version: lock.Version}
		}
		for _, v := range vendored {
			lf.PutVendored(v)
		}
	}
	now := testOnlyNow().UTC()
	if prev == nil {
		msg := fmt.Sprintf("%s has no entry for %s (not locked)", displayPath(lockPath), source)
		if len(vendored) == 0 {
			return msg, nil
		}
		if err := lock.Write(lockPath, lf); err != nil {
			return "", err
		}
		return msg + "; vendor: recorded", nil
	}
	entry := resolve.LockEntry(res, now)
	entry.Source = source
	entry.KeepTimes(prev)
	lf.Put(key, entry, now.Format(time.RFC3339))
	if err := lock.Write(lockPath, lf); err != nil {
		return "", fmt.Errorf("%s written, but %w; run `%s`", displayPath(pt.Path), err, lockCommand(cmd, pt.Arg, true))
	}
	return fmt.Sprintf("%s entry %q updated", displayPath(lockPath), key), nil
}
