package yamlx

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v4"
)

// Entry is one key of a mapping with its value.
type Entry struct{ Key, Value *yaml.Node }

// Fields describes a mapping that Decode is decoding into a struct: where it
// is and its keys. Hooks receive it to place their errors.
type Fields struct {
	File string
	Path string     // dotted path of the mapping ("" at the top)
	Node *yaml.Node // the mapping node (a null scalar for an empty value)
	Ctx  any        // the value the caller passed to Decode

	entries []Entry
	known   []string // the struct's keys (Unknown's suggestions)
}

// Entries returns the keys of the mapping (known or not), in document
// order.
func (f *Fields) Entries() []Entry { return f.entries }

// Get returns the entry of key, if the mapping has it.
func (f *Fields) Get(key string) (Entry, bool) {
	for _, e := range f.entries {
		if e.Key.Value == key {
			return e, true
		}
	}
	return Entry{}, false
}

// Value returns the value node of key (nil when key is absent).
func (f *Fields) Value(key string) *yaml.Node {
	e, _ := f.Get(key)
	return e.Value
}

// Field returns the dotted path of key (the mapping's for "").
func (f *Fields) Field(key string) string {
	if key == "" {
		return f.Path
	}
	return Join(f.Path, key)
}

// Errorf builds an *Error at the value of key, or at the mapping when key
// is "".
func (f *Fields) Errorf(key string, sentinel error, format string, args ...any) *Error {
	n := f.Node
	if key != "" {
		n = f.Value(key)
	}
	return Errorf(f.File, n, f.Field(key), sentinel, format, args...)
}

// Wrap builds an *Error at the value of key around err.
func (f *Fields) Wrap(key string, err error) *Error {
	return Wrap(f.File, f.Value(key), f.Field(key), err)
}

// KeyChecker is implemented by a struct whose keys need checks beyond their
// YAML type. Decode calls CheckKey after decoding each key into its field,
// in document order, and once more with key "" after the last key (also
// for an empty or null mapping), so errors come in the order of the file.
type KeyChecker interface {
	CheckKey(f *Fields, key string) error
}

// UnknownKeyer is implemented by a struct that handles keys it has no
// field for (by default an ErrUnknownField error at the key). A nil error
// ignores the key.
type UnknownKeyer interface {
	UnknownKey(f *Fields, e Entry) error
}

// Decode decodes the mapping n (nil or null: no keys) into the struct dst
// points to. A field is decoded when it has a `yaml:"name"` tag; embedded
// structs contribute their fields. Keys absent from the file leave their
// field as it was, so dst may hold defaults. Supported field types: string,
// bool, int, int64, float64, time.Duration, []string, map[string]string,
// *yaml.Node (the raw value), a struct (a nested mapping), a pointer to one
// of these (allocated when the key is present, even with a null value) and
// a slice of structs (a list of mappings). Values are read with String,
// Bool, Int, Float, Duration, Strings and StringMap, so every error is
// "file:line: field: reason". ctx is handed to hooks as Fields.Ctx.
func Decode(file, path string, n *yaml.Node, dst any, ctx any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("yamlx.Decode: %T is not a pointer to a struct", dst))
	}
	return decodeStruct(&Fields{File: file, Path: path, Node: n, Ctx: ctx}, v.Elem())
}

func decodeStruct(f *Fields, sv reflect.Value) error {
	if !IsNull(f.Node) {
		if f.Node.Kind != yaml.MappingNode {
			_, err := Pairs(f.File, f.Path, f.Node)
			return err
		}
		f.entries = make([]Entry, len(f.Node.Content)/2)
		for i := range f.entries {
			f.entries[i] = Entry{f.Node.Content[2*i], f.Node.Content[2*i+1]}
		}
	}
	info := schemaOf(sv.Type())
	f.known = info.knownKeys()
	hook, _ := sv.Addr().Interface().(KeyChecker)
	unknown, _ := sv.Addr().Interface().(UnknownKeyer)
	for _, e := range f.entries {
		idx, ok := info.keys[e.Key.Value]
		if !ok {
			if unknown == nil {
				return f.Unknown(e)
			}
			if err := unknown.UnknownKey(f, e); err != nil {
				return err
			}
			continue
		}
		if err := decodeValue(f, f.Field(e.Key.Value), e.Value, sv.FieldByIndex(idx)); err != nil {
			return err
		}
		if hook != nil {
			if err := hook.CheckKey(f, e.Key.Value); err != nil {
				return err
			}
		}
	}
	if hook != nil {
		return hook.CheckKey(f, "")
	}
	return nil
}

var (
	nodeType     = reflect.TypeFor[*yaml.Node]()
	durationType = reflect.TypeFor[time.Duration]()
)

func decodeValue(f *Fields, field string, n *yaml.Node, dst reflect.Value) error {
	var err error
	switch t := dst.Type(); {
	case t == nodeType:
		*dst.Addr().Interface().(**yaml.Node) = n
	case t == durationType:
		err = readInto(f, field, n, Duration, func(d time.Duration) { dst.SetInt(int64(d)) })
	case t.Kind() == reflect.String:
		err = readInto(f, field, n, String, dst.SetString)
	case t.Kind() == reflect.Bool:
		err = readInto(f, field, n, Bool, dst.SetBool)
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		err = readInto(f, field, n, Int, dst.SetInt)
	case t.Kind() == reflect.Float64:
		err = readInto(f, field, n, Float, dst.SetFloat)
	case t == reflect.TypeFor[[]string]():
		*dst.Addr().Interface().(*[]string), err = Strings(f.File, field, n)
	case t == reflect.TypeFor[map[string]string]():
		*dst.Addr().Interface().(*map[string]string), err = StringMap(f.File, field, n)
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		if err = decodeValue(f, field, n, p.Elem()); err == nil {
			dst.Set(p)
		}
	case t.Kind() == reflect.Struct:
		err = decodeStruct(&Fields{File: f.File, Path: field, Node: n, Ctx: f.Ctx}, dst)
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		err = decodeList(f, field, n, dst)
	default:
		panic(fmt.Sprintf("yamlx.Decode: unsupported field type %s (%s)", t, field))
	}
	return err
}

// readInto reads the scalar n with read and stores what it returns (the
// zero value on error) with set.
func readInto[T any](f *Fields, field string, n *yaml.Node, read func(file, field string, n *yaml.Node) (T, error), set func(T)) error {
	v, err := read(f.File, field, n)
	set(v)
	return err
}

// decodeList decodes a list of mappings into a slice of structs.
func decodeList(f *Fields, field string, n *yaml.Node, dst reflect.Value) error {
	if IsNull(n) {
		dst.SetZero()
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return Errorf(f.File, n, field, ErrType, "expected a list")
	}
	out := reflect.MakeSlice(dst.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		ff := &Fields{File: f.File, Path: fmt.Sprintf("%s[%d]", field, i), Node: item, Ctx: f.Ctx}
		if err := decodeStruct(ff, out.Index(i)); err != nil {
			return err
		}
	}
	dst.Set(out)
	return nil
}

// schema is the decoding plan of a struct type: the field index of each
// key.
type schema struct {
	keys map[string][]int
}

var schemas sync.Map // reflect.Type -> *schema

func schemaOf(t reflect.Type) *schema {
	if s, ok := schemas.Load(t); ok {
		return s.(*schema)
	}
	s := &schema{keys: map[string][]int{}}
	collect(s, t, nil)
	schemas.Store(t, s)
	return s
}

func collect(s *schema, t reflect.Type, prefix []int) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		idx := append(append([]int(nil), prefix...), i)
		switch name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ","); {
		case name != "" && name != "-":
			if _, dup := s.keys[name]; dup {
				panic(fmt.Sprintf("yamlx: key %q declared twice in %s", name, t))
			}
			s.keys[name] = idx
		case sf.Anonymous && sf.Type.Kind() == reflect.Struct:
			collect(s, sf.Type, idx)
		}
	}
}
