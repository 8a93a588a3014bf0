package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/runtime/native"
	"github.com/fullsend-ai/fullsend/internal/scan"
)

// ErrImage marks a refused --image (bad usage: the CLI exits 2).
var ErrImage = errors.New("prompt image refused")

// imageTypes are the media types --image accepts (by content sniffing).
var imageTypes = []string{"image/png", "image/jpeg", "image/gif", "image/webp"}

// planNative sets the native-only run options the harness and the flags
// decide: web_fetch (harness native.tools) and the prompt images.
func (p *Plan) planNative(tools []string, o Options) error {
	if p.Runtime == native.Name && slices.Contains(tools, native.ToolWebFetch) {
		p.RunOptions[native.OptWebFetch] = "true"
	}
	if len(o.Images) == 0 {
		return nil
	}
	fail := func(format string, a ...any) error {
		return &PlanError{Field: "--image", Err: fmt.Errorf("%w: "+format, append([]any{ErrImage}, a...)...)}
	}
	if p.Runtime != native.Name {
		return fail("only for the native runtime (runtime is %q)", p.Runtime)
	}
	if o.Resume != "" {
		return fail("not with --resume (the resumed transcript keeps its images)")
	}
	if p.TargetRepo == "" {
		return fail("images must lie inside the target repository, and there is none")
	}
	repo, err := filepath.EvalSymlinks(p.TargetRepo)
	if err != nil {
		return fail("target repository %s: %v", p.TargetRepo, err)
	}
	var paths []string
	for _, img := range o.Images {
		real, err := p.checkImage(img, o.Cwd, repo)
		if err != nil {
			return fail("%v", err)
		}
		paths = append(paths, real)
	}
	if len(paths) > native.MaxPromptImages {
		return fail("%d images, at most %d", len(paths), native.MaxPromptImages)
	}
	p.RunOptions[native.OptImages] = strings.Join(paths, "\n")
	return nil
}

// checkImage resolves one --image FILE (relative to cwd, symlinks
// resolved) and requires it inside the target repository (the copy the
// agent sees), outside the parts not copied, a regular file of at most
// native.MaxImageBytes whose content is png, jpeg, gif or webp.
func (p *Plan) checkImage(img, cwd, repo string) (string, error) {
	if strings.ContainsAny(img, "\n\r") {
		return "", fmt.Errorf("%q: control characters in the path", img)
	}
	abs := img
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cwd, img)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %v", img, errors.Unwrap(err))
	}
	if !within(real, repo) {
		return "", fmt.Errorf("%s: resolves to %s, outside the target repository %s", img, real, repo)
	}
	for _, ex := range p.ExcludeFromRepo {
		if exr, err := filepath.EvalSymlinks(ex); err == nil && (within(real, exr) || real == exr) {
			return "", fmt.Errorf("%s: inside %s, which is not copied into the sandbox", img, ex)
		}
	}
	f, err := os.Open(real)
	if err != nil {
		return "", fmt.Errorf("%s: %v", img, errors.Unwrap(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file", img)
	}
	if st.Size() > native.MaxImageBytes {
		return "", fmt.Errorf("%s: %d bytes, more than %d", img, st.Size(), native.MaxImageBytes)
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	if mt := http.DetectContentType(head[:n]); !slices.Contains(imageTypes, mt) {
		return "", fmt.Errorf("%s: %s is not png, jpeg, gif or webp", img, mt)
	}
	return real, nil
}

// configureWeb gives a native runtime asked to offer web_fetch the egress
// policy of the sandbox (the plan's network allowlist, the backend's
// allowed private networks and resolver) and the run's scan pipeline: fetched text is scanned as remote context and
// its findings join the report (phase "web_fetch").
func (x *execution) configureWeb() error {
	p := x.plan
	// The parent's web_fetch (native.tools) or a delegate_task child of
	// the web_fetch profile (native.subagent_profiles) needs the client.
	childWeb := slices.Contains(strings.Split(p.RunOptions[native.OptSubagentProfiles], ","), native.ProfileWebFetch)
	if p.RunOptions[native.OptWebFetch] != "true" && !childWeb {
		return nil
	}
	nr, ok := x.rt.(interface{ SetWeb(native.WebConfig) error })
	if !ok {
		return fmt.Errorf("web_fetch: runtime %s cannot offer it", p.Runtime)
	}
	pl, err := x.scanPipeline()
	if err != nil {
		return err
	}
	scanText := func(ctx context.Context, text []byte, source string) ([]string, error) {
		res, err := pl.Scan(ctx, text, scan.Meta{Path: source, Origin: scan.Remote, Kind: "context"})
		if err != nil {
			return nil, err
		}
		// evMu also guards the findings that runtime events add (verdicts).
		x.evMu.Lock()
		x.record("web_fetch", res.Findings, res.Blocked)
		x.evMu.Unlock()
		var rules []string
		if res.Blocked {
			for _, f := range res.Blocking() {
				rules = append(rules, f.Rule)
			}
		}
		return rules, nil
	}
	// The egress proxy's own policy: its allowlist, private networks and
	// resolver, so web_fetch reaches nothing the sandbox could not.
	so := x.o.SandboxOptions
	return nr.SetWeb(native.WebConfig{Allow: p.Spec.Network.Allow, AllowedPrivateNetworks: so.AllowedPrivateNetworks,
		Resolver: so.Resolver, Scan: scanText})
}
