package scan

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fullsend-ai/fullsend/internal/yamlx"
)

// AcceptFile is the name of the acceptance file in a fullsend dir.
const AcceptFile = "scan-accept.yaml"

// Acceptance is one reviewed finding accepted in scan-accept.yaml: every
// finding of Rule in content whose sha256 is SHA256 is reported as
// accepted (severity kept) and does not block. It is bound to those exact
// bytes: a changed file has another hash and is judged afresh.
type Acceptance struct {
	Rule   string `json:"rule" yaml:"rule"`
	SHA256 string `json:"sha256" yaml:"sha256"` // lower-case hex
	Reason string `json:"reason" yaml:"reason"`
	Who    string `json:"who" yaml:"who"`
	// Path is for people reading the file; it is never matched (the same
	// bytes are accepted wherever they are, local or fetched).
	Path string `json:"path,omitempty" yaml:"path,omitempty"`
}

// Acceptances is a loaded acceptance file. The zero value and nil accept
// nothing.
type Acceptances struct {
	list  []Acceptance
	index map[[2]string]int
}

// Len is the number of entries.
func (a *Acceptances) Len() int {
	if a == nil {
		return 0
	}
	return len(a.list)
}

// List returns a copy of the entries, in file order.
func (a *Acceptances) List() []Acceptance {
	if a == nil {
		return nil
	}
	return append([]Acceptance(nil), a.list...)
}

// lookup returns the acceptance of rule for content hashed sum, if any.
func (a *Acceptances) lookup(rule, sum string) (Acceptance, bool) {
	if a == nil {
		return Acceptance{}, false
	}
	i, ok := a.index[[2]string{rule, sum}]
	if !ok {
		return Acceptance{}, false
	}
	return a.list[i], true
}

// Marshal renders the entries as an acceptance file (what Execute uploads
// for the in-sandbox scan).
func (a *Acceptances) Marshal() ([]byte, error) {
	var doc struct {
		Version string       `yaml:"version"`
		Accept  []Acceptance `yaml:"accept"`
	}
	doc.Version, doc.Accept = "1", a.List()
	return yaml.Marshal(&doc)
}

// unacceptable are rules no acceptance may cover: they say a scan did not
// run, which never passes, whatever the bytes.
func unacceptable(rule string) bool {
	return strings.HasSuffix(rule, "/error") || rule == RuleMLUnavailable || rule == "scan-context/failed"
}

// LoadAcceptances reads an acceptance file; a missing file is (nil, nil).
// The file is capped at yamlx.MaxFileSize and must parse as ParseAcceptances
// says: any error names the file, the line and the field.
func LoadAcceptances(path string) (*Acceptances, error) {
	data, err := yamlx.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scan acceptances %s: %w", path, err)
	}
	return ParseAcceptances(path, data)
}

// ParseAcceptances parses an acceptance file:
//
//	version: 1            # optional; 1 is the only version
//	accept:
//	  - rule: injection/instruction-override
//	    sha256: <64 hex digits: sha256 of the file's exact bytes>
//	    reason: quotes override phrases as examples of what not to write
//	    who: alice@example.com
//	    path: skills/prompting/SKILL.md   # optional, for people
//
// rule, sha256, reason and who are required; unknown keys, a malformed
// hash, a rule that says a scan did not run (…/error,
// llm-guard/unavailable, scan-context/failed) and a repeated (rule,
// sha256) pair are errors.
func ParseAcceptances(file string, data []byte) (*Acceptances, error) {
	root, err := yamlx.Parse(file, data)
	if err != nil {
		return nil, err
	}
	a := &Acceptances{index: map[[2]string]int{}}
	pairs, err := yamlx.Pairs(file, "", root)
	if err != nil {
		return nil, err
	}
	for _, kv := range pairs {
		k, v := kv[0], kv[1]
		switch k.Value {
		case "version":
			s, err := yamlx.String(file, "version", v)
			if err != nil {
				return nil, err
			}
			if s != "1" {
				return nil, yamlx.Errorf(file, v, "version", yamlx.ErrValue, "unsupported version %q (want 1)", s)
			}
		case "accept":
			if yamlx.IsNull(v) {
				continue
			}
			if v.Kind != yaml.SequenceNode {
				return nil, yamlx.Errorf(file, v, "accept", yamlx.ErrType, "expected a list")
			}
			for i, item := range v.Content {
				if err := a.parseEntry(file, fmt.Sprintf("accept[%d]", i), item); err != nil {
					return nil, err
				}
			}
		default:
			return nil, yamlx.Errorf(file, k, k.Value, yamlx.ErrUnknownField, "want version or accept")
		}
	}
	return a, nil
}

func (a *Acceptances) parseEntry(file, field string, n *yaml.Node) error {
	pairs, err := yamlx.Pairs(file, field, n)
	if err != nil {
		return err
	}
	if pairs == nil {
		return yamlx.Errorf(file, n, field, yamlx.ErrValue, "empty entry")
	}
	var e Acceptance
	for _, kv := range pairs {
		k, v := kv[0], kv[1]
		f := yamlx.Join(field, k.Value)
		var dst *string
		switch k.Value {
		case "rule":
			dst = &e.Rule
		case "sha256":
			dst = &e.SHA256
		case "reason":
			dst = &e.Reason
		case "who":
			dst = &e.Who
		case "path":
			dst = &e.Path
		default:
			return yamlx.Errorf(file, k, f, yamlx.ErrUnknownField, "want rule, sha256, reason, who or path")
		}
		s, err := yamlx.String(file, f, v)
		if err != nil {
			return err
		}
		*dst = strings.TrimSpace(s)
	}
	for _, req := range []struct{ name, val string }{{"rule", e.Rule}, {"sha256", e.SHA256}, {"reason", e.Reason}, {"who", e.Who}} {
		if req.val == "" {
			return yamlx.Errorf(file, n, yamlx.Join(field, req.name), yamlx.ErrValue, "required")
		}
	}
	if !validRuleID(e.Rule) {
		return yamlx.Errorf(file, n, field+".rule", yamlx.ErrValue, "%q is not a rule id (scanner/rule, as findings show it)", e.Rule)
	}
	if unacceptable(e.Rule) {
		return yamlx.Errorf(file, n, field+".rule", yamlx.ErrValue, "%s cannot be accepted: it says a scan did not run, which never passes", e.Rule)
	}
	e.SHA256 = strings.ToLower(e.SHA256)
	if b, err := hex.DecodeString(e.SHA256); err != nil || len(b) != sha256.Size {
		return yamlx.Errorf(file, n, field+".sha256", yamlx.ErrValue, "want the 64 hex digits of the file's sha256")
	}
	key := [2]string{e.Rule, e.SHA256}
	if j, dup := a.index[key]; dup {
		return yamlx.Errorf(file, n, field, yamlx.ErrDuplicate, "rule %s for sha256 %s is already accepted by accept[%d]", e.Rule, e.SHA256, j)
	}
	a.index[key] = len(a.list)
	a.list = append(a.list, e)
	return nil
}

// validRuleID: "scanner/rule" in lower-case letters, digits and -_./.
func validRuleID(s string) bool {
	if !strings.Contains(s, "/") || strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") || len(s) > 200 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/') {
			return false
		}
	}
	return true
}

// applyAcceptances marks the findings an acceptance covers (each
// finding's SHA256 is the hash of the content it is in). It is the one
// place acceptances take effect (Pipeline.Scan).
func applyAcceptances(a *Acceptances, fs []Finding) {
	if a.Len() == 0 {
		return
	}
	for i := range fs {
		if fs[i].SHA256 == "" || unacceptable(fs[i].Rule) {
			continue
		}
		if e, ok := a.lookup(fs[i].Rule, fs[i].SHA256); ok {
			fs[i].Accepted = &Accepted{Who: e.Who, Reason: e.Reason}
		}
	}
}
