package schemacheck

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// check compiles schema and validates result; it returns the problems as
// "path: reason" lines.
func check(t *testing.T, schema, result string) []string {
	t.Helper()
	s, err := Compile("t.json", []byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	_, probs := s.ValidateJSON([]byte(result))
	var out []string
	for _, p := range probs {
		out = append(out, p.Location()+": "+p.Reason)
	}
	return out
}

func TestProblems(t *testing.T) {
	cases := []struct {
		name, schema, result string
		want                 []string // exact problems, in order
	}{
		{"draft-07 definitions and ref siblings ignored",
			`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"n":{"type":"integer"}},
			  "properties":{"a":{"$ref":"#/definitions/n","type":"string"}}}`,
			`{"a":"x"}`, []string{"/a: type: got string, want integer"}},
		{"draft-07 tuple items and additionalItems",
			`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}`,
			`["a","b",3]`, []string{"/1: type: got string, want integer", "/2: not: matches the schema it must not match"}},
		{"draft-07 format is not asserted",
			`{"$schema":"http://json-schema.org/draft-07/schema#","format":"email"}`, `"nope"`, nil},
		{"prefixItems then items",
			`{"prefixItems":[{"const":"k"}],"items":{"type":"number","maximum":10}}`,
			`["j",1,11]`, []string{`/0: const: got "j", want "k"`, "/2: maximum: got 11, want at most 10"}},
		{"patternProperties and additionalProperties schema",
			`{"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":{"type":"boolean"}}`,
			`{"x-a":1,"b":"no","c":true}`, []string{"/b: type: got string, want boolean", "/x-a: type: got integer, want string"}},
		{"pointer escapes in paths",
			`{"properties":{"a/b":{"properties":{"c~d":{"minLength":2}}}}}`,
			`{"a/b":{"c~d":"x"}}`, []string{"/a~1b/c~0d: minLength: got 1 characters, want at least 2"}},
		{"a failing property does not hide required and additionalProperties",
			`{"required":["z","y"],"additionalProperties":false,"properties":{"a":{"type":"string"},"y":{},"z":{}}}`,
			`{"a":1,"q":1,"p":2}`, []string{
				`/: required: missing properties: ["z" "y"]`,
				`/: unexpected additional properties ["p" "q"]`,
				"/a: type: got integer, want string"}},
		{"a failing item does not hide maxItems",
			`{"items":{"type":"string"},"maxItems":1}`,
			`["a",2]`, []string{"/: maxItems: array length 2 is greater than 1", "/1: type: got integer, want string"}},
		{"oneOf matching twice",
			`{"oneOf":[{"type":"integer"},{"minimum":0}]}`, `3`, []string{"/: oneOf: matches more than one alternative"}},
		{"oneOf matching none lists every alternative",
			`{"oneOf":[{"type":"string"},{"minimum":5}]}`, `3`,
			[]string{"/: type: got integer, want string", "/: minimum: got 3, want at least 5"}},
		{"if then else",
			`{"if":{"properties":{"k":{"const":1}}},"then":{"required":["a"]},"else":{"required":["b"]}}`,
			`{"k":2}`, []string{`/: required: missing properties: ["b"]`}},
		{"anchor and recursive ref",
			`{"$id":"https://example.test/tree.json","$defs":{"node":{"$anchor":"node","type":"object",
			  "properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#node"}}}}},"$ref":"#node"}`,
			`{"v":1,"kids":[{"v":2},{"v":3,"kids":[{"v":"x"}]}]}`, []string{"/kids/1/kids/0/v: type: got string, want integer"}},
		{"contains and long values cut",
			`{"contains":{"const":"` + strings.Repeat("a", 200) + `"}}`, `["b"]`, []string{"/: contains: no item matches"}},
		{"unevaluatedProperties is reported at the object",
			`{"allOf":[{"properties":{"a":{}}}],"unevaluatedProperties":false}`, `{"a":1,"b":2}`, nil /* checked below */},
		{"exclusive bounds and multipleOf",
			`{"properties":{"a":{"exclusiveMinimum":1},"b":{"multipleOf":0.5}}}`, `{"a":1,"b":0.7}`,
			[]string{"/a: exclusiveMinimum: got 1, want more than 1", "/b: multipleOf: got 0.7, want a multiple of 0.5"}},
		{"not JSON", `{}`, `{"a":`, []string{"/: not valid JSON: unexpected EOF"}},
		{"trailing data", `{}`, `{} {}`, []string{"/: not valid JSON: data after the value"}},
		{"valid", `{"type":"object"}`, `{}`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := check(t, c.schema, c.result)
			if c.name == "unevaluatedProperties is reported at the object" {
				if len(got) != 1 || !strings.HasPrefix(got[0], "/: ") {
					t.Fatalf("got %q, want one problem at /", got)
				}
				return
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestCompileRefuses(t *testing.T) {
	for name, c := range map[string]struct{ schema, want string }{
		"draft-04":      {`{"$schema":"http://json-schema.org/draft-04/schema#"}`, `$schema "http://json-schema.org/draft-04/schema#" is not supported`},
		"draft 2019-09": {`{"$schema":"https://json-schema.org/draft/2019-09/schema"}`, "is not supported"},
		"remote ref":    {`{"$ref":"https://example.test/other.json"}`, "references to other documents are not loaded"},
		"file ref":      {`{"$ref":"other.json"}`, "references to other documents are not loaded"},
		"bad regexp":    {`{"pattern":"(?<=a)b"}`, "pattern"},
		"not JSON":      {`{"type":`, "not valid JSON"},
		"two values":    {`{} {}`, "data after the value"},
		"bad keyword":   {`{"minLength":"two"}`, "not a JSON Schema document"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Compile("x.json", []byte(c.schema))
			if err == nil || !strings.HasPrefix(err.Error(), "schema x.json: ") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want a one-line error naming x.json with %q", err, c.want)
			}
		})
	}
}

// TestConcurrent validates failing results from many goroutines (probes
// are cached and built under a lock); run with -race.
func TestConcurrent(t *testing.T) {
	s, err := Compile("t.json", []byte(`{"properties":{"a":{"items":{"$ref":"#/$defs/i"}}},"$defs":{"i":{"type":"integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, probs := s.ValidateJSON(fmt.Appendf(nil, `{"a":[1,"x%d"]}`, i))
			if len(probs) != 1 || probs[0].Path != "/a/1" {
				t.Errorf("got %+v", probs)
			}
		}()
	}
	wg.Wait()
}

// A result failing everywhere gets MaxProblems problems and a last line
// saying there are more.
func TestMaxProblems(t *testing.T) {
	s, err := Compile("t.json", []byte(`{"items":{"type":"string"}}`))
	if err != nil {
		t.Fatal(err)
	}
	_, probs := s.ValidateJSON([]byte("[" + strings.Repeat("1,", 500) + "1]"))
	if len(probs) != MaxProblems+1 || probs[MaxProblems].Path != "" || !strings.Contains(probs[MaxProblems].Reason, "more problems") {
		t.Fatalf("%d problems, last %+v", len(probs), probs[len(probs)-1])
	}
	_, probs = s.ValidateJSON([]byte("[" + strings.Repeat("1,", 10) + "1]"))
	if len(probs) != 11 {
		t.Fatalf("%d problems, want 11", len(probs))
	}
}
