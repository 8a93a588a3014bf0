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
	Path   string
	URL    string
	Ref    string
	SHA256 string
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

func parseVendor(file, field string, n *yaml.Node) ([]Vendored, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, yamlx.Errorf(file, n, field, yamlx.ErrType, "expected a list")
	}
	var out []Vendored
	seen := map[string]bool{}
	for i, c := range n.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		pairs, err := yamlx.Pairs(file, f, c)
		if err != nil {
			return nil, err
		}
		var v Vendored
		for _, kv := range pairs {
			k, val := kv[0].Value, kv[1]
			kf := yamlx.Join(f, k)
			switch k {
			case "path":
				v.Path, err = yamlx.String(file, kf, val)
			case "url":
				v.URL, err = yamlx.String(file, kf, val)
			case "ref":
				v.Ref, err = yamlx.String(file, kf, val)
			case "sha256":
				v.SHA256, err = digest(file, kf, val)
			default:
				return nil, yamlx.Errorf(file, kv[0], kf, yamlx.ErrUnknownField, "")
			}
			if err != nil {
				return nil, err
			}
		}
		if v.Path == "" || v.URL == "" || v.SHA256 == "" {
			return nil, yamlx.Errorf(file, c, f, yamlx.ErrValue, "path, url and sha256 are required")
		}
		if clean, err := ref.CleanLocal(v.Path); err != nil || clean != v.Path {
			return nil, yamlx.Errorf(file, c, f, yamlx.ErrValue, "path %q must be a clean relative path inside the fullsend dir", v.Path)
		}
		if seen[v.Path] {
			return nil, yamlx.Errorf(file, c, f, yamlx.ErrValue, "path %q is listed twice", v.Path)
		}
		seen[v.Path] = true
		out = append(out, v)
	}
	return out, nil
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
