package schemacheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// The $schema values the engine validates.
const (
	Draft202012 = "https://json-schema.org/draft/2020-12/schema"
	draft7      = "http://json-schema.org/draft-07/schema#"
	draft7TLS   = "https://json-schema.org/draft-07/schema#"
)

// baseURI is where a compiled document lives for reference resolution;
// probes load it back under this name, and nothing else is ever loaded.
const baseURI = "file:///fullsend/schema.json"

// Schema is one compiled JSON Schema document. It is safe for concurrent
// use.
type Schema struct {
	name   string
	root   *jsonschema.Schema
	res    *jsonschema.Resolved
	draft7 bool
	index  *index

	mu     sync.Mutex
	probes map[string]*jsonschema.Resolved // by JSON Pointer into root
}

// Problem is one reason a result fails its schema.
type Problem struct {
	Path   string // JSON Pointer into the result; "" is the whole result
	Reason string
}

// Location is Path as shown to people: "/" for the whole result.
func (p Problem) Location() string {
	if p.Path == "" {
		return "/"
	}
	return p.Path
}

// Compile reads one schema document; name is for error messages.
func Compile(name string, data []byte) (*Schema, error) {
	fail := func(err error) (*Schema, error) {
		return nil, fmt.Errorf("schema %s: %s", name, oneLine(err.Error()))
	}
	if err := checkJSON(data); err != nil {
		return fail(err)
	}
	root := new(jsonschema.Schema)
	if err := json.Unmarshal(data, root); err != nil {
		return fail(fmt.Errorf("not a JSON Schema document: %v", err))
	}
	switch root.Schema {
	case "":
		// The engine reads a missing $schema as 2020-12; say so in the
		// document, so that probes (which load it) agree.
		root.Schema = Draft202012
	case Draft202012, draft7, draft7TLS:
	default:
		return fail(fmt.Errorf("$schema %q is not supported (draft 2020-12 and draft-07 are)", root.Schema))
	}
	res, err := root.Resolve(&jsonschema.ResolveOptions{BaseURI: baseURI, Loader: refuseLoader})
	if err != nil {
		return fail(err)
	}
	s := &Schema{name: name, root: root, res: res, draft7: root.Schema != Draft202012, probes: map[string]*jsonschema.Resolved{}}
	s.index = buildIndex(root)
	return s, nil
}

func refuseLoader(u *url.URL) (*jsonschema.Schema, error) {
	return nil, fmt.Errorf("%s: references to other documents are not loaded", u.Redacted())
}

// Validate checks a decoded result (see Decode); nil means valid.
func (s *Schema) Validate(v any) []Problem {
	if s.res.Validate(v) == nil {
		return nil
	}
	e := &explainer{s: s}
	e.explain("", s.root, v, "")
	return e.problems()
}

// ValidateJSON decodes data and validates it; a result that is not JSON
// is one problem at the root.
func (s *Schema) ValidateJSON(data []byte) (any, []Problem) {
	v, err := Decode(data)
	if err != nil {
		return nil, []Problem{{Reason: err.Error()}}
	}
	return v, s.Validate(v)
}

// Decode reads exactly one JSON value (objects as map[string]any, numbers
// as float64).
func Decode(data []byte) (any, error) {
	if err := checkJSON(data); err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	return v, nil
}

// checkJSON refuses anything but one JSON value (json.Unmarshal already
// refuses trailing data; this gives the reason in one line).
func checkJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("not valid JSON: empty")
		}
		return fmt.Errorf("not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("not valid JSON: data after the value")
	}
	return nil
}

// probe returns the engine's verdict for the subschema at ptr (a JSON
// Pointer into the document) on v.
func (s *Schema) probe(ptr string, v any) error {
	s.mu.Lock()
	r, ok := s.probes[ptr]
	if !ok {
		u, _ := url.Parse(baseURI)
		u.Fragment = ptr
		p := &jsonschema.Schema{Schema: s.root.Schema, Ref: u.String()}
		var err error
		r, err = p.Resolve(&jsonschema.ResolveOptions{Loader: func(u *url.URL) (*jsonschema.Schema, error) {
			if u.String() == baseURI {
				return s.root, nil
			}
			return refuseLoader(u)
		}})
		if err != nil {
			r = nil // the pointer does not name a subschema: no verdict
		}
		s.probes[ptr] = r
	}
	s.mu.Unlock()
	if r == nil {
		return errNoProbe
	}
	return r.Validate(v)
}

var errNoProbe = errors.New("no probe")

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	const max = 300
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}
