package native

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/frontmatter"
	"github.com/fullsend-ai/fullsend/internal/limit"
	"github.com/fullsend-ai/fullsend/internal/runtime"
)

// Bounds of the skill registry.
const (
	MaxSkillFiles       = 1000    // files listed per skill
	MaxSkillFileBytes   = 8 << 20 // a larger file is listed without being readable
	MaxSkillMDBytes     = 1 << 20 // SKILL.md read for its frontmatter
	MaxDescriptionBytes = 1024    // description shown to the model
)

// SkillFile is one regular file of a skill, hashed at registry build time.
type SkillFile struct {
	Path   string `json:"path"` // relative, forward slashes
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// Skill is one entry of the skill registry.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Source is "harness" (resolved by the runner, files hashed on the host)
	// or "runtime_fetch" (fetched mid-run by fetch_skill; files are read in
	// the sandbox).
	Source     string      `json:"source"`
	HostDir    string      `json:"host_dir,omitempty"`
	SandboxDir string      `json:"sandbox_dir"`
	Files      []SkillFile `json:"files,omitempty"`
	// Scripts lists the allowlisted "skill:scripts/x" entries of
	// run_skill_script (harness skills only).
	Scripts []string `json:"scripts,omitempty"`
	Notes   []string `json:"notes,omitempty"`
}

func (s *Skill) file(rel string) (SkillFile, bool) {
	for _, f := range s.Files {
		if f.Path == rel {
			return f, true
		}
	}
	return SkillFile{}, false
}

// SkillRegistry is the set of skills the model is told about, recorded in
// the run directory as skill-registry.json.
type SkillRegistry struct {
	Skills []*Skill `json:"skills"`
}

func (r *SkillRegistry) get(name string) *Skill {
	if r == nil {
		return nil
	}
	for _, s := range r.Skills {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func (r *SkillRegistry) names() []string {
	var out []string
	if r != nil {
		for _, s := range r.Skills {
			out = append(out, s.Name)
		}
	}
	return out
}

// scripts lists every allowlisted script entry.
func (r *SkillRegistry) scripts() []string {
	var out []string
	if r != nil {
		for _, s := range r.Skills {
			out = append(out, s.Scripts...)
		}
	}
	return out
}

// BuildRegistry indexes the resolved skills: name and description from the
// SKILL.md frontmatter, every regular file with its sha256, and the scripts
// under scripts/ as the run_skill_script allowlist. Symlinks are skipped
// (the sandbox upload skips them too). configDir is the sandbox
// configuration directory the skills are uploaded under.
func BuildRegistry(skills []runtime.Skill, configDir string) (*SkillRegistry, error) {
	reg := &SkillRegistry{Skills: []*Skill{}}
	for _, sk := range skills {
		if err := runtime.CheckName("skill", sk.Name); err != nil {
			return nil, err
		}
		s := &Skill{Name: sk.Name, Source: "harness", HostDir: sk.HostDir, SandboxDir: path.Join(configDir, "skills", sk.Name)}
		root, err := os.OpenRoot(sk.HostDir)
		if err != nil {
			return nil, fmt.Errorf("skill %q: %w", sk.Name, err)
		}
		err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			if len(s.Files) >= MaxSkillFiles {
				s.Notes = append(s.Notes, fmt.Sprintf("more than %d files: the rest is not listed", MaxSkillFiles))
				return fs.SkipAll
			}
			f, err := root.Open(p)
			if err != nil {
				return err
			}
			h := sha256.New()
			n, err := io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
			s.Files = append(s.Files, SkillFile{Path: p, SHA256: hex.EncodeToString(h.Sum(nil)), Size: n})
			if strings.HasPrefix(p, "scripts/") {
				s.Scripts = append(s.Scripts, sk.Name+":"+p)
			}
			return nil
		})
		if err != nil {
			root.Close()
			return nil, fmt.Errorf("skill %q: indexing %s: %w", sk.Name, sk.HostDir, err)
		}
		md, err := limit.ReadFile(root.Open, "SKILL.md", MaxSkillMDBytes)
		root.Close()
		if err != nil {
			return nil, fmt.Errorf("skill %q: %w", sk.Name, err)
		}
		meta := parseSkillFrontmatter(md)
		s.Description = meta.description
		if meta.name != "" && meta.name != sk.Name {
			s.Notes = append(s.Notes, fmt.Sprintf("frontmatter name %q differs from directory name; the directory name is used", meta.name))
		}
		s.Notes = append(s.Notes, meta.notes...)
		reg.Skills = append(reg.Skills, s)
	}
	return reg, nil
}

type skillMeta struct {
	name, description string
	notes             []string
}

// parseSkillFrontmatter reads name and description from a SKILL.md
// frontmatter block with internal/frontmatter (which retries unquoted
// colons leniently and says so); an unreadable block leaves both empty and
// a note, it does not stop the run (the runner already resolved the skill).
func parseSkillFrontmatter(md []byte) skillMeta {
	fm, err := frontmatter.Parse("SKILL.md", md)
	if err != nil {
		return skillMeta{notes: []string{"frontmatter unreadable: " + err.Error()}}
	}
	if !fm.Present {
		return skillMeta{notes: []string{"SKILL.md has no frontmatter"}}
	}
	meta := skillMeta{name: fm.Name, description: clip(strings.Join(strings.Fields(fm.Description), " "), MaxDescriptionBytes)}
	if fm.Notice != "" {
		meta.notes = append(meta.notes, fm.Notice)
	}
	return meta
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutRunes(s, n-3, true) + "..."
}

// checkResourcePath accepts a relative, clean, forward-slash path inside a
// skill directory.
func checkResourcePath(p string) error {
	switch {
	case p == "":
		return errors.New("empty path")
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is absolute; give it relative to the skill directory", p)
	case strings.Contains(p, "\\") || strings.ContainsRune(p, 0):
		return fmt.Errorf("path %q contains a backslash or NUL", p)
	case !fs.ValidPath(p):
		return fmt.Errorf("path %q is not a clean relative path (no '..', '.', or empty elements)", p)
	}
	return nil
}

// readHostSkillFile reads rel from a harness skill: it must be listed in
// the registry and still hash to the listed digest (the run-start snapshot).
func readHostSkillFile(s *Skill, rel string) ([]byte, error) {
	f, ok := s.file(rel)
	if !ok {
		return nil, fmt.Errorf("skill %q has no file %q (files: %s)", s.Name, rel, listFiles(s, 20))
	}
	if f.Size > MaxSkillFileBytes {
		return nil, fmt.Errorf("skill %q file %q is %d bytes, more than %d", s.Name, rel, f.Size, MaxSkillFileBytes)
	}
	root, err := os.OpenRoot(s.HostDir)
	if err != nil {
		return nil, fmt.Errorf("skill %q: %w", s.Name, err)
	}
	defer root.Close()
	data, err := limit.ReadFile(root.Open, filepath.FromSlash(rel), MaxSkillFileBytes)
	if err != nil {
		return nil, fmt.Errorf("skill %q: %w", s.Name, err)
	}
	if got := sha256Hex(data); got != f.SHA256 {
		return nil, fmt.Errorf("skill %q file %q changed since the run started (sha256 %s, registry %s)", s.Name, rel, got, f.SHA256)
	}
	return data, nil
}

func listFiles(s *Skill, max int) string {
	var names []string
	for _, f := range s.Files {
		names = append(names, f.Path)
	}
	sort.Strings(names)
	if len(names) > max {
		names = append(names[:max], "...")
	}
	return strings.Join(names, ", ")
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
