package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fullsend-ai/fullsend/internal/lock"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/resolve"
)

// vendorLock is the lock file a resolution that does not check lock
// entries (lock, pin, vendor) still honours: the vendor: entries of the
// lock file at path, with extra (entries about to be written) put over
// them, so vendored copies are held to their sha256 and serve a remote
// base's scripts. nil when there are none.
func vendorLock(path string, extra []lock.Vendored) (*lock.File, error) {
	lf, err := readLock(path)
	if err != nil {
		return nil, err
	}
	out := &lock.File{Version: lock.Version}
	if lf != nil {
		out.Vendor = slices.Clone(lf.Vendor)
	}
	for _, v := range extra {
		out.PutVendored(v)
	}
	if len(out.Vendor) == 0 {
		return nil, nil
	}
	return out, nil
}

// vendorBase is `fullsend vendor --base HARNESS [FIELD…]`: it vendors the
// scripts the harness's remote base names and the harness leaves to it,
// without writing any field of the harness (baseVendoring), and records
// them under vendor: in lock.yaml, where resolution finds them for the
// base's fields (audited as base_script).
func (e *Env) vendorBase(cmd *cobra.Command, harnessArg string, only []string, asJSON bool) error {
	pt, err := e.pinTarget(cmd, harnessArg)
	if err != nil {
		return err
	}
	bv, err := e.baseVendoring(cmd, pt, pt.src, only)
	if err != nil {
		return err
	}
	if len(bv.results) == 0 {
		return fmt.Errorf("%s: no remote base names a script this harness leaves to it; nothing to vendor (for a script of the harness's own field: `fullsend vendor HARNESS FIELD URL`)", displayPath(pt.Path))
	}
	rep := vendorReport{Harness: displayPath(pt.Path), Scripts: bv.results, Lock: "unchanged"}
	if len(bv.changed) > 0 {
		if rep.Lock, err = e.commitHarness(cmd.Context(), cmd, pt, pt.src, bv.changed...); err != nil {
			bv.undo()
			return err
		}
	}
	e.finishProgress()
	if asJSON {
		return writeJSON(e.Stdout, rep)
	}
	writeBaseVendored(e, rep.Scripts)
	if len(bv.changed) > 0 {
		fmt.Fprintf(e.Stdout, "lock: %s\n", rep.Lock)
	}
	return nil
}

func writeBaseVendored(e *Env, rs []vendorResult) {
	w := e.Stdout
	for _, r := range rs {
		if !r.Changed {
			fmt.Fprintf(w, "%s of the base: %s is up to date (%s, sha256 %s)\n", r.Field, r.Path, r.Requested, r.SHA256)
			continue
		}
		fmt.Fprintf(w, "vendored %s of the base: %s\n", r.Field, r.Requested)
		writePinned(e, r.pinResult)
		fmt.Fprintf(w, "  copied to %s; the base's %s runs it (no field of the harness written)\n", r.Path, r.Field)
	}
}

// baseVendored is what baseVendoring did: one result per base script,
// the vendor: entries to record, and how to undo the copies written.
type baseVendored struct {
	results  []vendorResult
	changed  []lock.Vendored
	restores []func()
}

func (b *baseVendored) undo() {
	for _, r := range b.restores {
		r()
	}
}

// baseVendoring vendors the scripts the remote bases of the harness src
// (the harness file's content, maybe edited; read from a temporary file
// beside it, so relative references are the same) name and the harness
// leaves to them (of the fields only, default all). Each is fetched at
// the URL the composed base names (its branch or tag resolved to a
// commit), scanned, and copied to vendor/HOST/OWNER/REPO/PATH; a copy
// lock.yaml already records with the same URL and sha256, whose bytes
// still match, is left alone. The caller records changed (commitHarness)
// or undoes the copies.
func (e *Env) baseVendoring(cmd *cobra.Command, pt *pinTarget, src []byte, only []string) (*baseVendored, error) {
	lf, err := readLock(pt.LockPath())
	if err != nil {
		return nil, err
	}
	dir, name := filepath.Split(pt.Path)
	tmp, err := os.CreateTemp(dir, "."+strings.TrimSuffix(name, filepath.Ext(name))+".vendor-*"+filepath.Ext(name))
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(src)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	opts := pt.opts
	opts.Layers, opts.HarnessCheck = e.harnessTrust(pt.HarnessTarget)
	opts.Lock = lf
	scripts, err := resolve.BaseScripts(cmd.Context(), tmp.Name(), opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", displayPath(pt.Path), err)
	}
	var fields []string
	for _, s := range scripts {
		fields = append(fields, s.Field)
	}
	for _, f := range only {
		if !slices.Contains(fields, f) {
			return nil, usageError{fmt.Errorf("vendor --base: %s: no base script in field %q; the base's scripts are in: %s", displayPath(pt.Path), f, strings.Join(fields, ", "))}
		}
	}
	bv := &baseVendored{results: []vendorResult{}}
	for _, s := range scripts {
		if len(only) > 0 && !slices.Contains(only, s.Field) {
			continue
		}
		r, v, err := e.vendorBaseScript(cmd, pt, s)
		if err != nil {
			bv.undo()
			return nil, err
		}
		if r.Changed {
			if i := slices.IndexFunc(bv.changed, func(c lock.Vendored) bool { return c.Path == v.Path }); i >= 0 {
				if bv.changed[i] != v {
					bv.undo()
					return nil, fmt.Errorf("%s: %s and another base script are both vendored to %s with different content; vendor them one at a time (FIELD)", displayPath(pt.Path), s.Field, v.Path)
				}
			} else {
				restore, err := vendorWrite(pt.Root, v.Path, r.Pinned.Content)
				if err != nil {
					bv.undo()
					return nil, err
				}
				bv.restores = append(bv.restores, restore)
				bv.changed = append(bv.changed, v)
			}
		}
		bv.results = append(bv.results, r)
	}
	return bv, nil
}

// vendorBaseScript learns the pin of one base script (resolve.Pin: the
// same allowlist, fetch, hash and scan as `fullsend pin`) and returns its
// vendor: entry; Changed is false when lock.yaml already records it and
// the copy still matches.
func (e *Env) vendorBaseScript(cmd *cobra.Command, pt *pinTarget, s resolve.BaseScript) (vendorResult, lock.Vendored, error) {
	if _, ok := ref.MatchPrefix(s.URL, pt.cfg.AllowedRemoteResources); !ok {
		return vendorResult{}, lock.Vendored{}, pt.orgRefusal(s.URL)
	}
	p, err := resolve.Pin(cmd.Context(), resolve.PinRequest{URL: s.URL, Kind: "script", Allowed: pt.cfg.AllowedRemoteResources}, pt.opts)
	if err != nil {
		return vendorResult{}, lock.Vendored{}, fmt.Errorf("%s: %s of the base (%s): %w", displayPath(pt.Path), s.Field, s.URL, err)
	}
	if _, ok := ref.MatchPrefix(p.URL, pt.cfg.AllowedRemoteResources); !ok {
		return vendorResult{}, lock.Vendored{}, pt.orgRefusal(p.URL)
	}
	rel, err := vendorPath(p.URL, pt.cfg.Forges)
	if err != nil {
		return vendorResult{}, lock.Vendored{}, err
	}
	v := lock.Vendored{Path: rel, URL: p.URL, SHA256: string(p.SHA256)}
	if p.Ref != p.Commit {
		v.Ref = p.Ref
	} else {
		// The base names the script at a commit: record that very URL
		// (whatever its form), the one resolution looks the copy up by.
		v.URL = s.URL
	}
	r := vendorResult{Field: s.Field, Path: rel, pinResult: pinResult{Field: s.Field, Requested: s.URL, Ref: p.Ref, Pinned: p, Scan: scanSummary(p), Changed: true}}
	if old := s.Vendored; old != nil {
		r.OldSHA256 = ref.Digest(old.SHA256)
		if *old == v {
			cur, err := os.ReadFile(filepath.Join(pt.Root, filepath.FromSlash(rel)))
			r.Changed = err != nil || !bytes.Equal(cur, p.Content)
		}
	}
	return r, v, nil
}

// pinVendor is pin's --vendor: the base scripts of the edited harness src
// vendored (baseVendoring); nothing without --vendor.
func (e *Env) pinVendor(cmd *cobra.Command, pt *pinTarget, src []byte, on bool) (*baseVendored, error) {
	if !on {
		return &baseVendored{}, nil
	}
	return e.baseVendoring(cmd, pt, src, nil)
}
