package pin

import (
	"os"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzEdit: whatever harness text parses, an edit either fails with an
// error or yields a document that parses, holds the new value in the
// field with its pin comment, and keeps every other line.
func FuzzEdit(f *testing.F) {
	if b, err := os.ReadFile("testdata/commented.yaml"); err == nil {
		f.Add(string(b), addSkill)
	}
	f.Add("agent: a.md\nskills:\n- x\n", "https://h.test/o/r/blob/c/a.md#sha256=00")
	f.Add("forge:\n  github:\n    policy: p.yaml\nvalidation_loop:\n  max_iterations: 2\n", "v: x")
	f.Add("skills: []\nagent:\n", "'q\"")
	f.Fuzz(func(t *testing.T, src, value string) {
		if !utf8.ValidString(value) || value == "" || strings.ContainsFunc(value, func(r rune) bool {
			return unicode.IsControl(r) || r == '\uFEFF' || r == 0x85 || r == 0x2028 || r == 0x2029
		}) {
			return
		}
		if _, err := Parse([]byte(src)); err != nil {
			return
		}
		for _, name := range []string{"agent", "skills", "forge.github.skills", "validation_loop.schema"} {
			d, _ := Parse([]byte(src))
			fl, _ := LookupField(name)
			var err error
			if fl.List {
				err = d.Put(fl, -1, value, "main")
			} else {
				err = d.Set(fl, value, "main")
			}
			if err != nil {
				continue
			}
			out := d.Bytes()
			d2, err := Parse(out)
			if err != nil {
				t.Fatalf("%s: the edit does not parse: %v\n%s", name, err, out)
			}
			found := false
			for _, e := range d2.Entries() {
				if e.Field.Name == name && e.Value == value && e.Ref == "main" {
					found = true
				}
			}
			if !found {
				t.Fatalf("%s: value %q with pin main not found in\n%s", name, value, out)
			}
			old := strings.Split(strings.TrimSuffix(strings.ReplaceAll(src, "\r\n", "\n"), "\n"), "\n")
			if d := Diff([]byte(src), out); strings.Count(d, "\n-") > 1 {
				t.Fatalf("%s: more than one line changed (of %d):\n%s", name, len(old), d)
			}
		}
	})
}
