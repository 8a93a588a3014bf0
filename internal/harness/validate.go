package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// Resolved is the outcome of checking one reference.
type Resolved struct {
	FieldRef
	Ref   ref.Ref // parsed reference (zero for ${VAR} values)
	Local string  // path on disk for local references ("" when remote, env-expanded or missing-but-optional)
}

// Validate checks every rule of the harness against the org config cfg
// (nil = config.Default()) and resolves its local references; see the
// package documentation for the list. It returns the first error, naming
// file, line and field.
func (h *Harness) Validate(cfg *config.Config) error {
	_, err := h.Check(cfg)
	return err
}

// Check is Validate that also returns every reference with its resolution.
func (h *Harness) Check(cfg *config.Config) ([]Resolved, error) {
	if cfg == nil {
		cfg = config.Default()
	}
	fail := func(field, value string, err error) error {
		p := h.Pos(field, value)
		return &yamlx.Error{File: p.File, Line: p.Line, Field: field, Err: err}
	}
	// allowed_remote_resources: valid prefixes, subset of the org list.
	allow := make([]string, 0, len(h.AllowedRemoteResources))
	for i, p := range h.AllowedRemoteResources {
		field := fmt.Sprintf("allowed_remote_resources[%d]", i)
		c, err := ref.CanonicalPrefix(p)
		if err != nil {
			return nil, fail("allowed_remote_resources", p, fmt.Errorf("%s: %w", field, err))
		}
		if _, ok := ref.MatchPrefix(c, cfg.AllowedRemoteResources); !ok {
			where := "config.yaml"
			if cfg.Path != "" {
				where = cfg.Path
			}
			return nil, fail("allowed_remote_resources", p, fmt.Errorf("%s: %q %w (%s has %d entries)", field, p, ErrOrgAllowlist, where, len(cfg.AllowedRemoteResources)))
		}
		allow = append(allow, c)
	}
	if len(allow) == 0 {
		if h.AllowRuntimeFetch {
			return nil, fail("allow_runtime_fetch", "", ErrRuntimeFetch)
		}
		if h.IsSet("max_runtime_fetches") {
			return nil, fail("max_runtime_fetches", "", ErrRuntimeFetch)
		}
	}
	if h.Agent == "" {
		return nil, fail("agent", "", fmt.Errorf("%w: required (the agent definition to run)", yamlx.ErrValue))
	}
	if h.Runtime != "" && !validRuntimeName(h.Runtime) {
		return nil, fail("runtime", "", fmt.Errorf("%w: %q is not a runtime name", yamlx.ErrValue, h.Runtime))
	}
	if err := checkImage(h.Image); err != nil {
		return nil, fail("image", "", err)
	}
	if err := h.checkShape(""); err != nil {
		return nil, err
	}
	if err := h.checkTrust(cfg); err != nil {
		return nil, err
	}
	if err := h.checkSecrets(cfg, ""); err != nil {
		return nil, err
	}
	for _, name := range h.ForgeNames() {
		o := *h.Forge[name]
		o.origins = filterPrefix(h.origins, "forge."+name+".")
		if err := o.checkShape("forge." + name + "."); err != nil {
			return nil, err
		}
		if err := o.checkSecrets(cfg, "forge."+name+"."); err != nil {
			return nil, err
		}
	}
	var out []Resolved
	for _, fr := range h.Refs() {
		r, err := h.checkRef(fr, allow)
		if err != nil {
			return nil, &yamlx.Error{File: fr.Pos.File, Line: fr.Pos.Line, Field: fr.Field, Err: err}
		}
		out = append(out, r)
	}
	return out, nil
}

// checkSecrets refuses a secrets: name the org did not declare in
// config.yaml secrets (prefix "forge.<name>." for an overlay).
func (h *Harness) checkSecrets(cfg *config.Config, prefix string) error {
	for _, name := range h.Secrets {
		if _, ok := cfg.SecretByName(name); ok {
			continue
		}
		where := "config.yaml"
		if cfg.Path != "" {
			where = cfg.Path
		}
		p := h.Pos(prefix+"secrets", name)
		return &yamlx.Error{File: p.File, Line: p.Line, Field: prefix + "secrets",
			Err: fmt.Errorf("%w: %s (declare it in %s secrets:, with where the runner reads it and its hosts)", config.ErrSecretNotDeclared, name, where)}
	}
	return nil
}

// checkShape validates non-reference values of a harness or of an overlay
// (prefix "forge.<name>."; its positions are recorded under full names).
func (h *Harness) checkShape(prefix string) error {
	for i, hf := range h.HostFiles {
		if !path.IsAbs(hf.Dest) || path.Clean(hf.Dest) != hf.Dest || strings.Contains(hf.Dest, "${") {
			p := h.Pos(prefix+"host_files.dest", hf.Dest)
			return &yamlx.Error{File: p.File, Line: p.Line, Field: fmt.Sprintf("%shost_files[%d].dest", prefix, i),
				Err: fmt.Errorf("%w: %q must be a clean absolute sandbox path", yamlx.ErrValue, hf.Dest)}
		}
	}
	if vl := h.ValidationLoop; vl != nil && vl.Schema == "" && vl.Script == "" {
		p := h.Pos(prefix+"validation_loop", "")
		return &yamlx.Error{File: p.File, Line: p.Line, Field: prefix + "validation_loop", Err: fmt.Errorf("%w: needs a schema or a script", yamlx.ErrValue)}
	}
	return nil
}

func validRuntimeName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return s != ""
}

// checkImage accepts any image reference; when it carries a digest
// ("@sha256:…") the digest must be 64 hex digits.
func checkImage(img string) error {
	if img == "" {
		return nil
	}
	if strings.ContainsAny(img, " \t\n") {
		return fmt.Errorf("%w: %q is not an image reference", yamlx.ErrValue, img)
	}
	if _, d, ok := strings.Cut(img, "@"); ok {
		hex, ok := strings.CutPrefix(d, "sha256:")
		if !ok {
			return fmt.Errorf("%w: image digest must be sha256:<64 hex>", yamlx.ErrValue)
		}
		if _, err := ref.ParseDigest(hex); err != nil {
			return fmt.Errorf("%w: image digest must be sha256:<64 hex>", yamlx.ErrValue)
		}
	}
	return nil
}

func (h *Harness) checkRef(fr FieldRef, allow []string) (Resolved, error) {
	res := Resolved{FieldRef: fr}
	if fr.EnvExpanded() {
		if fr.Kind != HostFile {
			return res, ErrEnvNotAllowed
		}
		return res, nil // expanded and checked at run time
	}
	r, err := ref.Parse(fr.Value)
	if err != nil {
		return res, err
	}
	res.Ref = r
	if r.Kind == ref.URL {
		if fr.Executable {
			return res, fmt.Errorf("%s: %w", r.URL, ErrExecutableRemote)
		}
		if err := r.RequireDigest(); err != nil {
			return res, err
		}
		if _, err := ref.CheckAllowed(r, allow); err != nil {
			if len(allow) == 0 {
				return res, fmt.Errorf("%w (the harness's allowed_remote_resources is empty); %s", err, ref.AllowHint(r.URL))
			}
			return res, fmt.Errorf("%w; %s", err, ref.AllowHint(r.URL))
		}
		return res, nil
	}
	// Opened through the dir it was found in (OpenLocal), so the type
	// checks below look at what containment admitted.
	l, err := h.OpenLocal(fr.Value)
	if err != nil {
		if fr.Optional && errors.Is(err, ErrNotFound) {
			return res, nil
		}
		return res, err
	}
	defer l.Close()
	if err := l.want(fr.Kind.IsDir()); err != nil {
		return res, err
	}
	if fr.Kind == Skill {
		if err := skillMD(l); err != nil {
			return res, fmt.Errorf("skill directory without SKILL.md: %w", err)
		}
	}
	res.Local = l.Path
	return res, nil
}

// skillMD checks that the skill directory l holds SKILL.md as a regular
// file: a symlink is not part of a skill (the tree hash and the sandbox
// upload leave it out), so it is refused, never followed.
func skillMD(l *Local) error {
	fi, err := l.Lstat("SKILL.md")
	if err != nil {
		return err
	}
	p := filepath.Join(l.Path, "SKILL.md")
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s: %w: is a symlink (a skill's files must be regular files)", p, ErrWrongType)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s: %w: want a regular file", p, ErrWrongType)
	}
	return nil
}
