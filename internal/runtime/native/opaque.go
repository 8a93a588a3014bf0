package native

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/schemacheck"
)

// ReturnFile is the raw structured return of a delegate_task child, kept in
// the child's run directory (children/<k>/return.json).
const ReturnFile = "return.json"

// Bounds of the opaque walk: $ref hops along one path (a cycle of
// references ends as an unknown schema) and schema/value visits in all
// (combinators over references can multiply); past either, opaque.
const (
	maxRefHops     = 32
	maxOpaqueSteps = 100_000
)

// opaqueLink is what the parent sees in place of a child value the return
// schema does not constrain: a pointer (RFC 6901) into the raw return.
func opaqueLink(ptr string) map[string]any {
	return map[string]any{"@link": "opaque:#" + ptr}
}

// opaqueView returns the copy of a child's return value the parent model
// sees. The child's text is untrusted (it may carry instructions written
// by whatever the child read), so only what the schema pins down reaches
// the parent:
//
//   - numbers, booleans and nulls pass through;
//   - a string passes (sanitized) only when its schema location has enum,
//     const or pattern, or a format of checkedFormats (date-time, date,
//     time, uuid, ipv4, ipv6) that the string satisfies; any other string
//     (an unchecked format such as email or uri included) becomes an
//     opaque link;
//   - an object whose keys are all modeled (properties, a matching
//     patternProperties pattern, or propertyNames constraining each key
//     as above) is walked key by key; an object with a key the
//     schema does not model becomes one opaque link (its keys are
//     free-form text too);
//   - arrays are walked element by element (prefixItems, then items; the
//     draft-07 array form of items with additionalItems);
//   - $ref within the schema document ("#", "#/…") is followed; any other
//     reference is an unknown schema;
//   - allOf, anyOf, oneOf: the value is walked under each branch whose
//     type admits it (merged with the keywords beside the combinator), and
//     a location stays visible only where every branch lets it through.
//
// An unknown schema (true, {}, an unresolved $ref) models nothing: its
// strings and objects become links.
func opaqueView(schema, value any) any {
	w := &opaqueWalker{root: schema}
	return w.walk(schema, value, "", 0)
}

type opaqueWalker struct {
	root  any
	steps int
}

func (w *opaqueWalker) walk(schema, value any, ptr string, hops int) any {
	if w.steps++; w.steps > maxOpaqueSteps {
		return opaqueLink(ptr)
	}
	s, hops := w.resolve(schema, hops)
	if alts := branches(s, value); alts != nil {
		var out any
		for i, b := range alts {
			v := w.walk(b, value, ptr, hops)
			if i == 0 {
				out = v
			} else {
				out = meet(out, v, ptr)
			}
		}
		return out
	}
	switch x := value.(type) {
	case string:
		if constrained(s, x) {
			return sanitize(x, MaxSummaryBytes)
		}
		return opaqueLink(ptr)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = w.walk(itemSchema(s, i), e, ptr+"/"+itoa(i), hops)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			sub, ok := propertySchema(s, k)
			if !ok {
				return opaqueLink(ptr)
			}
			out[sanitize(k, 256)] = w.walk(sub, e, ptr+"/"+escapePointer(k), hops)
		}
		return out
	}
	return value // json.Number, bool, nil
}

// resolve follows local $ref chains; anything else unresolvable is an
// unknown schema (nil).
func (w *opaqueWalker) resolve(schema any, hops int) (map[string]any, int) {
	for {
		s, ok := schema.(map[string]any)
		if !ok {
			return nil, hops // true, false or not a schema
		}
		ref, ok := s["$ref"].(string)
		if !ok {
			return s, hops
		}
		hops++
		if hops > maxRefHops || !strings.HasPrefix(ref, "#") {
			return nil, hops
		}
		target, ok := lookupPointer(w.root, strings.TrimPrefix(ref, "#"))
		if !ok {
			return nil, hops
		}
		// Keywords beside $ref (draft 2019+) are kept: the target's win
		// only where the referring schema says nothing.
		merged := map[string]any{}
		if t, ok := target.(map[string]any); ok {
			for k, v := range t {
				merged[k] = v
			}
		} else {
			return nil, hops
		}
		for k, v := range s {
			if k != "$ref" {
				merged[k] = v
			}
		}
		schema = merged
	}
}

// branches returns the schemas to walk value under when s has allOf,
// anyOf or oneOf: each branch merged with the keywords beside the
// combinators, branches whose type excludes the value dropped. nil when s
// has no combinator.
func branches(s map[string]any, value any) []any {
	var alts []any
	found := false
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		list, ok := s[kw].([]any)
		if !ok {
			continue
		}
		found = true
		for _, b := range list {
			bm, ok := b.(map[string]any)
			if !ok {
				continue // true/false: models nothing (false admits nothing)
			}
			m := map[string]any{}
			for k, v := range s {
				if k != "allOf" && k != "anyOf" && k != "oneOf" {
					m[k] = v
				}
			}
			for k, v := range bm {
				m[k] = v
			}
			if admits(m, value) {
				alts = append(alts, m)
			}
		}
	}
	if !found {
		return nil
	}
	if len(alts) == 0 {
		return []any{nil} // no branch is known to apply: unknown
	}
	return alts
}

// admits reports whether the type keyword of s (if any) allows value's
// JSON type.
func admits(s map[string]any, value any) bool {
	t, ok := s["type"]
	if !ok {
		return true
	}
	want := schemacheck.JSONType(value)
	switch x := t.(type) {
	case string:
		return typeMatches(x, want)
	case []any:
		for _, e := range x {
			if name, ok := e.(string); ok && typeMatches(name, want) {
				return true
			}
		}
		return false
	}
	return true
}

func typeMatches(name, want string) bool {
	return name == want || (name == "number" && want == "integer")
}

// constrained: the schema location pins the string v down: enum, const or
// pattern (the return was validated against them), or a format of
// checkedFormats that v satisfies. Any other format is an annotation the
// validator never checks (an "email" or a "uri" carries words): alone it
// pins nothing.
func constrained(s map[string]any, v string) bool {
	if s == nil {
		return false
	}
	for _, kw := range []string{"enum", "const", "pattern"} {
		if _, ok := s[kw]; ok {
			return true
		}
	}
	f, ok := s["format"].(string)
	return ok && formatHolds(f, v)
}

// itemSchema is the schema of element i of an array under s.
func itemSchema(s map[string]any, i int) any {
	if s == nil {
		return nil
	}
	if prefix, ok := s["prefixItems"].([]any); ok {
		if i < len(prefix) {
			return prefix[i]
		}
		return s["items"]
	}
	if tuple, ok := s["items"].([]any); ok { // draft-07 tuple form
		if i < len(tuple) {
			return tuple[i]
		}
		return s["additionalItems"]
	}
	return s["items"]
}

// propertySchema is the schema of key k of an object under s; ok is false
// when the schema does not model the key.
func propertySchema(s map[string]any, k string) (any, bool) {
	if s == nil {
		return nil, false
	}
	if props, ok := s["properties"].(map[string]any); ok {
		if sub, ok := props[k]; ok {
			return sub, true
		}
	}
	if pats, ok := s["patternProperties"].(map[string]any); ok {
		for p, sub := range pats {
			if re, err := regexp.Compile(p); err == nil && re.MatchString(k) {
				return sub, true
			}
		}
	}
	if names, ok := s["propertyNames"].(map[string]any); ok && constrained(names, k) {
		return s["additionalProperties"], true
	}
	return nil, false
}

// meet combines two walks of the same value: equal parts stay, anything
// else becomes a link at the first place they differ.
func meet(a, b any, ptr string) any {
	if reflect.DeepEqual(a, b) {
		return a
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return opaqueLink(ptr)
		}
		out := make([]any, len(x))
		for i := range x {
			out[i] = meet(x[i], y[i], ptr+"/"+itoa(i))
		}
		return out
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) || isLink(x) || isLink(y) {
			return opaqueLink(ptr)
		}
		out := make(map[string]any, len(x))
		for k, v := range x {
			w, ok := y[k]
			if !ok {
				return opaqueLink(ptr)
			}
			out[k] = meet(v, w, ptr+"/"+escapePointer(k))
		}
		return out
	}
	return opaqueLink(ptr)
}

func isLink(m map[string]any) bool {
	_, ok := m["@link"]
	return ok && len(m) == 1
}

// lookupPointer resolves an RFC 6901 pointer ("" = the whole document).
func lookupPointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, ok := atoi(tok)
			if !ok || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func atoi(s string) (int, bool) {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' || n > 1<<30 {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
