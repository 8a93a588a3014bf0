package yamlx

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"
)

type inner struct {
	Name  string `yaml:"name"`
	Count int    `yaml:"count"`
}

type common struct {
	S string `yaml:"s"`
}

type outer struct {
	common
	B     bool              `yaml:"b"`
	I64   int64             `yaml:"i64"`
	F     float64           `yaml:"f"`
	D     time.Duration     `yaml:"d"`
	L     []string          `yaml:"l"`
	M     map[string]string `yaml:"m"`
	Raw   *yaml.Node        `yaml:"raw"`
	In    inner             `yaml:"in"`
	P     *inner            `yaml:"p"`
	PB    *bool             `yaml:"pb"`
	Items []inner           `yaml:"items"`
	Skip  string            // no tag: never decoded
}

// traced records the hooks Decode calls, and fails on a key named "bad".
type traced struct {
	A    string `yaml:"a"`
	Bad  string `yaml:"bad"`
	Kids []kid  `yaml:"kids"`
}

type kid struct {
	X string `yaml:"x"`
}

func (t *traced) CheckKey(f *Fields, key string) error {
	log := f.Ctx.(*[]string)
	*log = append(*log, "check "+f.Field(key))
	if key == "bad" {
		return f.Errorf(key, ErrValue, "%q is bad", t.Bad)
	}
	return nil
}

func (t *traced) UnknownKey(f *Fields, e Entry) error {
	log := f.Ctx.(*[]string)
	*log = append(*log, fmt.Sprintf("unknown %s@%d", f.Field(e.Key.Value), e.Key.Line))
	return nil
}

func (k *kid) CheckKey(f *Fields, key string) error {
	log := f.Ctx.(*[]string)
	*log = append(*log, fmt.Sprintf("kid %s line %d", f.Field(key), f.Node.Line))
	return nil
}

func decode(t *testing.T, src string, dst any, ctx any) error {
	t.Helper()
	root, err := Parse("f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return Decode("f.yaml", "", root, dst, ctx)
}

func TestDecodeTypes(t *testing.T) {
	t.Parallel()
	src := "s: hi\nb: true\ni64: 1_000\nf: 0.5\nd: 2m\nl: [a, b]\nm: {k: v}\nraw: [1]\nin: {name: n}\np: ~\npb: ~\nitems:\n  - {name: x, count: 2}\n  - ~\n"
	o := outer{In: inner{Count: 7}, Skip: "kept"}
	if err := decode(t, src, &o, nil); err != nil {
		t.Fatal(err)
	}
	switch {
	case o.S != "hi" || !o.B || o.I64 != 1000 || o.F != 0.5 || o.D != 2*time.Minute:
		t.Errorf("scalars %+v", o)
	case len(o.L) != 2 || o.M["k"] != "v" || o.Raw == nil || o.Raw.Kind != yaml.SequenceNode:
		t.Errorf("lists %+v", o)
	case o.In != (inner{Name: "n", Count: 7}):
		t.Errorf("absent key changed the default: %+v", o.In)
	case o.P == nil || *o.P != (inner{}) || o.PB == nil || *o.PB:
		t.Errorf("null pointers not allocated: %+v %v", o.P, o.PB)
	case len(o.Items) != 2 || o.Items[0] != (inner{"x", 2}) || o.Items[1] != (inner{}):
		t.Errorf("items %+v", o.Items)
	case o.Skip != "kept":
		t.Errorf("untagged field decoded")
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"s: hi\nzz: 1\n", "f.yaml:2: zz: unknown field"},
		{"in:\n  name: n\n  nmae: m\n", "f.yaml:3: in.nmae: unknown field: did you mean name?"},
		{"items:\n  - name: a\n  - name: b\n    cnt: 1\n", "f.yaml:4: items[1].cnt: unknown field"},
		{"items: {name: a}\n", "f.yaml:1: items: wrong type: expected a list"},
		{"items: [a]\n", "f.yaml:1: items[0]: wrong type: expected a mapping, got a scalar (str)"},
		{"in: [1]\n", "f.yaml:1: in: wrong type: expected a mapping, got a list"},
		{"l: a\n", "f.yaml:1: l: wrong type: expected a list, got a scalar (str)"},
		{"p: {count: x}\n", "f.yaml:1: p.count: wrong type: expected an integer"},
		{"pb: 1\n", "f.yaml:1: pb: wrong type: expected true or false"},
		{"d: 5\n", "f.yaml:1: d: invalid value: \"5\" is not a duration like 30s or 2m"},
		{"m:\n  k: [v]\n", "f.yaml:2: m.k: wrong type: expected a string, got a list"},
	}
	for _, c := range cases {
		err := decode(t, c.in, &outer{}, nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: err = %v, want %s", c.in, err, c.want)
		}
		var ye *Error
		if !errors.As(err, &ye) {
			t.Errorf("%q: %T is not an *Error", c.in, err)
		}
	}
}

// TestDecodeHooks: hooks run key by key in the order of the file, the end
// hook runs for an empty mapping too, and the first error stops decoding
// (a later error is not reported).
func TestDecodeHooks(t *testing.T) {
	t.Parallel()
	var log []string
	src := "zz: 1\nkids:\n  - {x: 1}\n  - ~\na: 1\nbad: no\nkids2: 1\n"
	err := decode(t, src, &traced{}, &log)
	if err == nil || err.Error() != `f.yaml:6: bad: invalid value: "no" is bad` {
		t.Fatalf("err = %v", err)
	}
	want := []string{"unknown zz@1", "kid kids[0].x line 3", "kid kids[0] line 3", "kid kids[1] line 4", "check kids", "check a", "check bad"}
	if strings.Join(log, "|") != strings.Join(want, "|") {
		t.Fatalf("hooks\n got %q\nwant %q", log, want)
	}
	log = nil
	if err := decode(t, "a: 1\n", &traced{}, &log); err != nil || strings.Join(log, "|") != "check a|check " {
		t.Fatalf("end hook: %v %q", err, log)
	}
}

func TestDecodeSchemaPanics(t *testing.T) {
	t.Parallel()
	type twice struct {
		A string `yaml:"a"`
		B string `yaml:"a"`
	}
	type unsupported struct {
		U uint `yaml:"u"`
	}
	for name, dst := range map[string]any{"twice": &twice{}, "unsupported": &unsupported{}, "not a pointer": twice{}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			root, _ := Parse("f.yaml", []byte("u: 1\n"))
			_ = Decode("f.yaml", "", root, dst, nil)
		}()
	}
}

func TestFieldsErrorfAtMapping(t *testing.T) {
	t.Parallel()
	f := &Fields{File: "f.yaml", Path: "a.b", Node: &yaml.Node{Line: 3}}
	if err := f.Errorf("", ErrValue, "needs %s", "x"); err.Error() != "f.yaml:3: a.b: invalid value: needs x" {
		t.Fatal(err)
	}
}
