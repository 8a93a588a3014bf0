package schemacheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// explainer finds where a failing result fails (see the package doc).
type explainer struct {
	s    *Schema
	out  []Problem
	seen map[string]bool // schema pointer + instance path already explained
}

// maxDepth bounds the walk (a $ref cycle revisits the same pair and stops
// on seen; this guards pathological but acyclic depth).
const maxDepth = 64

// explain reports why v (at instance path ip) fails the subschema n at
// schema pointer ptr; nothing when it passes.
func (e *explainer) explain(ptr string, n *jsonschema.Schema, v any, ip string) {
	if e.seen == nil {
		e.seen = map[string]bool{}
	}
	key := ptr + "\x00" + ip
	if len(e.out) >= MaxProblems || e.seen[key] || strings.Count(ip, "/")+strings.Count(ptr, "/") > 4*maxDepth {
		return
	}
	e.seen[key] = true
	err := e.s.probe(ptr, v)
	if err == nil || errors.Is(err, errNoProbe) {
		return // passes, or no verdict to explain
	}
	before := len(e.out)
	for _, k := range e.children(ptr, n, v, ip) {
		e.explain(k.ptr, k.n, k.v, k.ip)
	}
	found := len(e.out) > before
	// The engine's own message when it stopped at this level (or when
	// nothing below could be located), unless the children already say
	// it (a combinator) or hidden says it in a stable order.
	if (wraps(err) == 2 || !found) && !(found && isCombinator(err)) && !ownCheck(err) {
		e.add(ip, e.why(n, v, err))
	}
	e.hidden(n, v, ip)
	if len(e.out) == before {
		e.add(ip, e.why(n, v, err))
	}
}

// why is the reason for a failure at this level: described from the
// subschema when the engine stopped here, its message otherwise.
func (e *explainer) why(n *jsonschema.Schema, v any, err error) string {
	if wraps(err) == 2 {
		return describe(n, v, err)
	}
	return reason(err)
}

func (e *explainer) add(ip, why string) {
	e.out = append(e.out, Problem{Path: ip, Reason: why})
}

// MaxProblems bounds the problems of one result: the walk stops there
// (each problem is one line fed back to the agent).
const MaxProblems = 100

// problems returns the problems sorted by location, without duplicates;
// when the walk stopped at MaxProblems, a last one says so.
func (e *explainer) problems() []Problem {
	full := len(e.out) >= MaxProblems
	sort.SliceStable(e.out, func(i, j int) bool { return e.out[i].Path < e.out[j].Path })
	seen := map[Problem]bool{}
	out := slices.DeleteFunc(e.out, func(p Problem) bool {
		dup := seen[p]
		seen[p] = true
		return dup
	})
	if full {
		out = append(out, Problem{Reason: fmt.Sprintf("more problems not listed (the first %d are)", MaxProblems)})
	}
	return out
}

// hidden reports the keywords the engine checks after the children and so
// never reaches when a child fails.
func (e *explainer) hidden(n *jsonschema.Schema, v any, ip string) {
	switch x := v.(type) {
	case map[string]any:
		var missing []string
		for _, r := range n.Required {
			if _, ok := x[r]; !ok {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			e.add(ip, fmt.Sprintf("required: missing properties: %q", missing))
		}
		if n.AdditionalProperties != nil && isFalse(n.AdditionalProperties) && (!e.s.draft7 || n.Ref == "") {
			var extra []string
			for _, k := range sortedKeys(x) {
				if _, ok := n.Properties[k]; !ok && !e.matchesPattern(n, k) {
					extra = append(extra, k)
				}
			}
			if len(extra) > 0 {
				e.add(ip, fmt.Sprintf("unexpected additional properties %q", extra))
			}
		}
	case []any:
		if n.MinItems != nil && len(x) < *n.MinItems {
			e.add(ip, fmt.Sprintf("minItems: array length %d is less than %d", len(x), *n.MinItems))
		}
		if n.MaxItems != nil && len(x) > *n.MaxItems {
			e.add(ip, fmt.Sprintf("maxItems: array length %d is greater than %d", len(x), *n.MaxItems))
		}
	}
}

// isFalse tells the schema false (which the engine reads as {"not": {}}).
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

// child is one subschema applied to one part of the result.
type child struct {
	ptr string
	n   *jsonschema.Schema
	v   any
	ip  string
}

// children lists the subschemas of n that apply to v or to a part of it,
// in a stable order: $ref, allOf, failing anyOf/oneOf alternatives,
// then/else, properties, items.
func (e *explainer) children(ptr string, n *jsonschema.Schema, v any, ip string) []child {
	var ks []child
	if n.Ref != "" {
		if tp, tn := e.s.index.target(ptr, n.Ref); tn != nil {
			ks = append(ks, child{tp, tn, v, ip})
		}
		if e.s.draft7 {
			return ks // draft-07: the siblings of $ref are ignored
		}
	}
	for i, a := range n.AllOf {
		ks = append(ks, child{ptr + "/allOf/" + strconv.Itoa(i), a, v, ip})
	}
	ks = append(ks, e.alternatives(ptr+"/anyOf", n.AnyOf, v, ip)...)
	ks = append(ks, e.alternatives(ptr+"/oneOf", n.OneOf, v, ip)...)
	if n.If != nil {
		err := e.s.probe(ptr+"/if", v)
		if err == nil {
			if n.Then != nil {
				ks = append(ks, child{ptr + "/then", n.Then, v, ip})
			}
		} else if n.Else != nil && !errors.Is(err, errNoProbe) {
			ks = append(ks, child{ptr + "/else", n.Else, v, ip})
		}
	}
	switch x := v.(type) {
	case map[string]any:
		ks = append(ks, e.objectChildren(ptr, n, x, ip)...)
	case []any:
		ks = append(ks, e.arrayChildren(ptr, n, x, ip)...)
	}
	return ks
}

// alternatives are the branches of an anyOf or oneOf when none passes.
func (e *explainer) alternatives(ptr string, alts []*jsonschema.Schema, v any, ip string) []child {
	var ks []child
	for i, a := range alts {
		p := ptr + "/" + strconv.Itoa(i)
		if err := e.s.probe(p, v); err == nil || errors.Is(err, errNoProbe) {
			return nil // this keyword is not what fails
		}
		ks = append(ks, child{p, a, v, ip})
	}
	return ks
}

func (e *explainer) objectChildren(ptr string, n *jsonschema.Schema, x map[string]any, ip string) []child {
	var ks []child
	for _, k := range sortedKeys(x) {
		matched := false
		if sub, ok := n.Properties[k]; ok {
			ks = append(ks, child{ptr + "/properties/" + escape(k), sub, x[k], ip + "/" + escape(k)})
			matched = true
		}
		for _, pat := range sortedKeys(n.PatternProperties) {
			if e.s.index.regexp(pat).MatchString(k) {
				ks = append(ks, child{ptr + "/patternProperties/" + escape(pat), n.PatternProperties[pat], x[k], ip + "/" + escape(k)})
				matched = true
			}
		}
		if !matched && n.AdditionalProperties != nil && !isFalse(n.AdditionalProperties) {
			ks = append(ks, child{ptr + "/additionalProperties", n.AdditionalProperties, x[k], ip + "/" + escape(k)})
		}
	}
	return ks
}

func (e *explainer) matchesPattern(n *jsonschema.Schema, k string) bool {
	for pat := range n.PatternProperties {
		if e.s.index.regexp(pat).MatchString(k) {
			return true
		}
	}
	return false
}

func (e *explainer) arrayChildren(ptr string, n *jsonschema.Schema, x []any, ip string) []child {
	var ks []child
	item := func(p string, s *jsonschema.Schema, i int) {
		ks = append(ks, child{p, s, x[i], ip + "/" + strconv.Itoa(i)})
	}
	rest := 0
	switch {
	case e.s.draft7 && n.ItemsArray != nil:
		for i := 0; i < len(x) && i < len(n.ItemsArray); i++ {
			item(ptr+"/items/"+strconv.Itoa(i), n.ItemsArray[i], i)
		}
		if n.AdditionalItems != nil {
			for i := len(n.ItemsArray); i < len(x); i++ {
				item(ptr+"/additionalItems", n.AdditionalItems, i)
			}
		}
		return ks
	case !e.s.draft7:
		for i := 0; i < len(x) && i < len(n.PrefixItems); i++ {
			item(ptr+"/prefixItems/"+strconv.Itoa(i), n.PrefixItems[i], i)
		}
		rest = len(n.PrefixItems)
	}
	if n.Items != nil {
		for i := rest; i < len(x); i++ {
			item(ptr+"/items", n.Items, i)
		}
	}
	return ks
}

// wraps counts the engine's "validating <schema>" layers around the
// innermost error: 2 (the probe and the subschema) means the subschema's
// own keywords failed, more means a subschema below it did.
func wraps(err error) int {
	n := 0
	for err != nil {
		if errors.Unwrap(err) == nil {
			return n
		}
		n++
		err = errors.Unwrap(err)
	}
	return n
}

func innermost(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// ownCheck tells the messages hidden produces itself: the engine lists
// additional properties in map order.
func ownCheck(err error) bool {
	m := innermost(err).Error()
	return strings.HasPrefix(m, "required: ") || strings.HasPrefix(m, "unexpected additional properties ")
}

func isCombinator(err error) bool {
	m := innermost(err).Error()
	return strings.HasPrefix(m, "anyOf: ") || strings.HasPrefix(m, "oneOf: did not")
}

// reason is the engine's innermost message, one line, with the keywords
// whose messages print whole subschemas reworded.
func reason(err error) string {
	if errors.Is(err, errNoProbe) {
		return "does not match the schema"
	}
	m := innermost(err).Error()
	switch {
	case strings.HasPrefix(m, "anyOf: "):
		return "anyOf: matches none of the alternatives"
	case strings.HasPrefix(m, "oneOf: did not"):
		return "oneOf: matches none of the alternatives"
	case strings.HasPrefix(m, "oneOf: validated against both"):
		return "oneOf: matches more than one alternative"
	case strings.HasPrefix(m, "not: "):
		return `not: matches the schema it must not match`
	case strings.HasPrefix(m, "contains: "):
		return "contains: no item matches"
	}
	return oneLine(m)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// escape is one JSON Pointer reference token.
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// index maps the document's resources and anchors to JSON Pointers, for
// following a $ref during the walk.
type index struct {
	resources map[string]string // absolute URI without fragment -> pointer
	anchors   map[string]string // URI#anchor -> pointer
	bases     map[string]*url.URL
	nodes     map[string]*jsonschema.Schema
	res       map[string]*regexp.Regexp
}

func buildIndex(root *jsonschema.Schema) *index {
	ix := &index{resources: map[string]string{}, anchors: map[string]string{}, bases: map[string]*url.URL{},
		nodes: map[string]*jsonschema.Schema{}, res: map[string]*regexp.Regexp{}}
	base, _ := url.Parse(baseURI)
	ix.walk("", root, base)
	return ix
}

func (ix *index) walk(ptr string, n *jsonschema.Schema, base *url.URL) {
	if n == nil {
		return
	}
	if _, dup := ix.nodes[ptr]; dup {
		return
	}
	ix.nodes[ptr] = n
	id := n.ID
	if id != "" && !strings.HasPrefix(id, "#") {
		if u, err := base.Parse(id); err == nil {
			u.Fragment = ""
			base = u
			ix.resources[u.String()] = ptr
		}
	} else if strings.HasPrefix(id, "#") && len(id) > 1 {
		ix.anchors[base.String()+id] = ptr // draft-07 plain-name fragment
	}
	if ptr == "" {
		ix.resources[baseURI] = ""
	}
	if n.Anchor != "" {
		ix.anchors[base.String()+"#"+n.Anchor] = ptr
	}
	ix.bases[ptr] = base
	one := func(k string, s *jsonschema.Schema) { ix.walk(ptr+"/"+k, s, base) }
	many := func(k string, ss []*jsonschema.Schema) {
		for i, s := range ss {
			one(k+"/"+strconv.Itoa(i), s)
		}
	}
	named := func(k string, m map[string]*jsonschema.Schema) {
		for name, s := range m {
			one(k+"/"+escape(name), s)
		}
	}
	named("$defs", n.Defs)
	named("definitions", n.Definitions)
	named("properties", n.Properties)
	named("patternProperties", n.PatternProperties)
	named("dependentSchemas", n.DependentSchemas)
	named("dependencies", n.DependencySchemas)
	many("allOf", n.AllOf)
	many("anyOf", n.AnyOf)
	many("oneOf", n.OneOf)
	many("prefixItems", n.PrefixItems)
	many("items", n.ItemsArray)
	for k, s := range map[string]*jsonschema.Schema{"items": n.Items, "additionalItems": n.AdditionalItems,
		"contains": n.Contains, "additionalProperties": n.AdditionalProperties, "propertyNames": n.PropertyNames,
		"unevaluatedItems": n.UnevaluatedItems, "unevaluatedProperties": n.UnevaluatedProperties,
		"not": n.Not, "if": n.If, "then": n.Then, "else": n.Else, "contentSchema": n.ContentSchema} {
		one(k, s)
	}
	for _, pat := range sortedKeys(n.PatternProperties) {
		if re, err := regexp.Compile(pat); err == nil {
			ix.res[pat] = re
		}
	}
}

// target is the pointer and node a $ref at ptr names, or nil when it is
// not in this document.
func (ix *index) target(ptr, ref string) (string, *jsonschema.Schema) {
	base, ok := ix.bases[ptr]
	if !ok {
		return "", nil
	}
	u, err := base.Parse(ref)
	if err != nil {
		return "", nil
	}
	frag := u.Fragment
	u.Fragment = ""
	var tp string
	switch {
	case frag == "" || strings.HasPrefix(frag, "/"):
		rp, ok := ix.resources[u.String()]
		if !ok {
			return "", nil
		}
		tp = rp + frag
	default:
		tp, ok = ix.anchors[u.String()+"#"+frag]
		if !ok {
			return "", nil
		}
	}
	n := ix.nodes[tp]
	if n == nil {
		return "", nil
	}
	return tp, n
}

// regexp returns a patternProperties key compiled (the engine compiled and
// accepted every one already).
func (ix *index) regexp(pat string) *regexp.Regexp {
	if re, ok := ix.res[pat]; ok {
		return re
	}
	return regexp.MustCompile(`\A\z.`) // matches nothing
}

// describe rewrites the engine's message for the keywords whose message
// prints the whole value or numbers as fractions, from the subschema and
// the value themselves.
func describe(n *jsonschema.Schema, v any, err error) string {
	m := innermost(err).Error()
	kw, _, _ := strings.Cut(m, ": ")
	num := func(f *float64) string { return strconv.FormatFloat(*f, 'g', -1, 64) }
	switch {
	case kw == "type":
		want := n.Types
		if n.Type != "" {
			want = []string{n.Type}
		}
		return fmt.Sprintf("type: got %s, want %s", typeName(v), strings.Join(want, " or "))
	case kw == "minimum" && n.Minimum != nil:
		return fmt.Sprintf("minimum: got %s, want at least %s", short(v), num(n.Minimum))
	case kw == "maximum" && n.Maximum != nil:
		return fmt.Sprintf("maximum: got %s, want at most %s", short(v), num(n.Maximum))
	case kw == "exclusiveMinimum" && n.ExclusiveMinimum != nil:
		return fmt.Sprintf("exclusiveMinimum: got %s, want more than %s", short(v), num(n.ExclusiveMinimum))
	case kw == "exclusiveMaximum" && n.ExclusiveMaximum != nil:
		return fmt.Sprintf("exclusiveMaximum: got %s, want less than %s", short(v), num(n.ExclusiveMaximum))
	case kw == "multipleOf" && n.MultipleOf != nil:
		return fmt.Sprintf("multipleOf: got %s, want a multiple of %s", short(v), num(n.MultipleOf))
	case kw == "minLength" && n.MinLength != nil:
		return fmt.Sprintf("minLength: got %d characters, want at least %d", runes(v), *n.MinLength)
	case kw == "maxLength" && n.MaxLength != nil:
		return fmt.Sprintf("maxLength: got %d characters, want at most %d", runes(v), *n.MaxLength)
	case kw == "pattern":
		return fmt.Sprintf("pattern: %s does not match %s", short(v), short(n.Pattern))
	case kw == "enum":
		return fmt.Sprintf("enum: got %s, want one of %s", short(v), short(n.Enum))
	case kw == "const" && n.Const != nil:
		return fmt.Sprintf("const: got %s, want %s", short(v), short(*n.Const))
	}
	return reason(err)
}

// JSONType names the JSON type of a decoded value (encoding/json's types,
// json.Number included): "null", "boolean", "string", "integer", "number",
// "array", "object", or "" for anything else.
func JSONType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			return "number"
		}
		return "integer"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	}
	return ""
}

// typeName is JSONType, or the Go type of a value that is not JSON.
func typeName(v any) string {
	if t := JSONType(v); t != "" {
		return t
	}
	return fmt.Sprintf("%T", v)
}

func runes(v any) int {
	s, _ := v.(string)
	return utf8.RuneCountInString(s)
}

// short is v as JSON, cut to 80 bytes.
func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 80
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
