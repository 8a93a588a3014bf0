package native

import (
	"errors"
	"strings"

	"github.com/fullsend-ai/fullsend/internal/schemacheck"
)

// returnError is a child's structured return that is not valid. Error is
// the whole explanation, quoting the child's own text where the validator
// does: the child gets it to correct its answer, and result-file checks
// print it. The parent gets parentErrors instead.
type returnError struct {
	what   string                // the return as a whole: too large, not JSON
	detail string                // what's explanation (may quote the text)
	probs  []schemacheck.Problem // schema problems
}

func (e *returnError) Error() string {
	if e.probs != nil {
		return schemaError(e.probs).Error()
	}
	if e.detail != "" {
		return e.what + ": " + e.detail
	}
	return e.what
}

// fullReasons are the schema keywords whose reasons name only the schema's
// own words and numbers (types, lengths, counts, required property names),
// never the child's text: they reach the parent whole. Other keywords
// (pattern, enum, const, format: their reasons quote the value) reach it
// as the keyword alone; reasons in no list as "does not match the schema".
var (
	fullReasons = map[string]bool{
		"type": true, "required": true, "minLength": true, "maxLength": true,
		"minItems": true, "maxItems": true, "minProperties": true, "maxProperties": true,
		"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
		"multipleOf": true, "anyOf": true, "oneOf": true, "not": true, "contains": true,
	}
	keywordOnly = map[string]bool{
		"pattern": true, "enum": true, "const": true, "format": true, "uniqueItems": true,
		"dependentRequired": true, "propertyNames": true, "additionalProperties": true,
	}
)

// parentErrors renders an invalid return for the parent model: JSON
// pointer paths (RFC 6901) and schema keywords, never the child's text. A
// path token that is an object key the return schema does not name
// anywhere (under some "properties") is shown as "*": the child chose it.
func parentErrors(err error, schemaDoc any) string {
	var re *returnError
	if !errors.As(err, &re) {
		return "invalid return"
	}
	if re.probs == nil {
		return re.what
	}
	names := map[string]bool{}
	propertyNames(schemaDoc, names, 0)
	lines := make([]string, 0, len(re.probs))
	for _, p := range re.probs {
		lines = append(lines, "at "+safePointer(p.Path, names)+": "+parentReason(p.Reason))
	}
	return strings.Join(lines, "; ")
}

func parentReason(r string) string {
	if strings.HasPrefix(r, "more problems not listed") {
		return r
	}
	if strings.HasPrefix(r, "unexpected additional properties") {
		return "additionalProperties"
	}
	kw, _, ok := strings.Cut(r, ":")
	switch {
	case ok && fullReasons[kw]:
		return r
	case ok && keywordOnly[kw]:
		return kw
	}
	return "does not match the schema"
}

// safePointer is ptr with every key token the schema does not name
// replaced by "*" (array indices and named keys stay).
func safePointer(ptr string, names map[string]bool) string {
	if ptr == "" {
		return "/"
	}
	toks := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, tok := range toks {
		if _, isIndex := atoi(tok); isIndex {
			continue
		}
		key := strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if !names[key] {
			toks[i] = "*"
		}
	}
	return "/" + strings.Join(toks, "/")
}

// propertyNames collects the keys of every "properties" object in the
// schema document (bounded depth: schemas are small, and a deep one only
// loses names).
func propertyNames(schema any, into map[string]bool, depth int) {
	if depth > 64 {
		return
	}
	switch x := schema.(type) {
	case map[string]any:
		if props, ok := x["properties"].(map[string]any); ok {
			for k := range props {
				into[k] = true
			}
		}
		for _, v := range x {
			propertyNames(v, into, depth+1)
		}
	case []any:
		for _, v := range x {
			propertyNames(v, into, depth+1)
		}
	}
}
