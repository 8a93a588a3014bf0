package pin

import (
	"fmt"
	"strings"
)

// scriptFields are the executable fields `fullsend vendor` fills with a
// local copy of a remote script.
var scriptFields = []string{"pre_script", "post_script", "validation_loop.script"}

// LookupScriptField returns the script field named name (for `fullsend
// vendor`): its value is always a local path.
func LookupScriptField(name string) (Field, error) {
	for _, s := range scriptFields {
		if s == name {
			return Field{Name: s, Path: strings.Split(s, "."), Kind: "script"}, nil
		}
	}
	return Field{}, fmt.Errorf("field %q: %w (script fields: %s)", name, ErrUnknownField, strings.Join(scriptFields, ", "))
}

// ScriptFieldNames lists the fields LookupScriptField accepts.
func ScriptFieldNames() string { return strings.Join(scriptFields, ", ") }

// Value returns the scalar value of field f ("" when absent).
func (d *Doc) Value(f Field) string {
	if v := lookup(d.root, f.Path); v != nil && v.Tag != "!!null" {
		return v.Value
	}
	return ""
}
