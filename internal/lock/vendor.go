package lock

import (
	"fmt"
	"sort"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/ref"
	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// Vendored is a remote script `fullsend vendor` copied into the fullsend
// dir (scripts run on the host, so they stay local files; the lock says
// where each came from and what it must hash to). Resolution refuses a
// vendored file whose bytes no longer match SHA256, whatever the flags.
//
//	vendor:
//	  - path: vendor/github.com/o/r/scripts/pre.sh   # relative to the fullsend dir
//	    url: https://github.com/o/r/blob/COMMIT/scripts/pre.sh
//	    ref: main                                    # the branch or tag it follows ("" = a commit)
//	    sha256: "…"
type Vendored struct {
	Path   string `yaml:"path"`
	URL    string `yaml:"url"`
	Ref    string `yaml:"ref"`
	SHA256 string `yaml:"sha256"`
}

// FindVendored returns the vendored entry of path (relative to the
// fullsend dir, slash-separated), or nil.
func (f *File) FindVendored(path string) *Vendored {
	if f == nil {
		return nil
	}
	for i := range f.Vendor {
		if f.Vendor[i].Path == path {
			return &f.Vendor[i]
		}
	}
	return nil
}

// PutVendored adds or replaces the entry of v.Path, keeping entries
// sorted by path.
func (f *File) PutVendored(v Vendored) {
	if e := f.FindVendored(v.Path); e != nil {
		*e = v
		return
	}
	f.Vendor = append(f.Vendor, v)
	sort.Slice(f.Vendor, func(i, j int) bool { return f.Vendor[i].Path < f.Vendor[j].Path })
}

// CheckKey checks one vendor: entry once decoded.
func (v *Vendored) CheckKey(f *yamlx.Fields, key string) error {
	switch key {
	case "sha256":
		return digest(f, key, &v.SHA256)
	case "":
		if v.Path == "" || v.URL == "" || v.SHA256 == "" {
			return f.Errorf("", yamlx.ErrValue, "path, url and sha256 are required")
		}
		if clean, err := ref.CleanLocal(v.Path); err != nil || clean != v.Path {
			return f.Errorf("", yamlx.ErrValue, "path %q must be a clean relative path inside the fullsend dir", v.Path)
		}
	}
	return nil
}

// checkVendor checks the decoded vendor: list as a whole (key of f): a
// list, each path once.
func checkVendor(f *yamlx.Fields, key string, vs []Vendored) error {
	n := f.Value(key)
	if n.Kind != yaml.SequenceNode {
		return f.Errorf(key, yamlx.ErrType, "expected a list")
	}
	seen := map[string]bool{}
	for i, v := range vs {
		if seen[v.Path] {
			return yamlx.Errorf(f.File, n.Content[i], fmt.Sprintf("%s[%d]", f.Field(key), i), yamlx.ErrValue, "path %q is listed twice", v.Path)
		}
		seen[v.Path] = true
	}
	return nil
}

func vendorNode(vs []Vendored) *yaml.Node {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, v := range vs {
		m := mapping()
		addScalar(m, "path", v.Path, "!!str")
		addScalar(m, "url", v.URL, "!!str")
		if v.Ref != "" {
			addScalar(m, "ref", v.Ref, "!!str")
		}
		addScalar(m, "sha256", v.SHA256, "!!str")
		seq.Content = append(seq.Content, m)
	}
	return seq
}
