package frontmatter

import (
	"reflect"
	"testing"
)

// simpleCases are blocks around the edge of the fast path; each is
// checked against the YAML parser.
var simpleCases = []string{
	"name: s000\ndescription: skill 0\n",
	"name: my-skill\ndescription: Does things (quickly), see docs/x.md.\n",
	"name: a\n\ndescription: b\n",
	"name: a\nskills: x, y,, z\n",
	"name: a\ndependencies: foo\n",
	"name: a\npolicy: policies/p.yaml\n",
	"allowed-tools: Read, Write\n",
	"name: a\nname: b\n",             // duplicate: YAML rejects
	"name: yes\n",                    // boolean word
	"name: No\n",                     // boolean word
	"name: null\n",                   // null
	"name: Null\n",                   // null
	"name: ~\n",                      // null
	"name: 12\n",                     // number
	"name: .inf\n",                   // float
	"name: a # comment\n",            // comment
	"name: 'quoted'\n",               // quotes
	"name: a: b\n",                   // lenient colon quoting
	"name: a  b\n",                   // double space
	"name: a \n",                     // trailing blank
	"name:\n",                        // null value
	"name: a\r\n",                    // CR
	"  name: a\n",                    // indentation
	"name: [a, b]\n",                 // flow list
	"name: a\ndescription: b\n  c\n", // continuation
	"Name: a\n",                      // upper-case key: slow path
	"y: a\n",                         // boolean key
	"on: a\n",                        // boolean key
	"name: a\t\n",                    // tab
}

// TestSimpleBlockMatchesYAML: whatever the fast path accepts, the YAML
// parser reads the same way; and the fast path is really taken for the
// plain SKILL.md shape (so this test fails if it is removed).
func TestSimpleBlockMatchesYAML(t *testing.T) {
	t.Parallel()
	for _, c := range simpleCases {
		checkSimple(t, []byte(c))
	}
	if _, ok := simpleBlock([]byte("name: s000\ndescription: skill 0\n")); !ok {
		t.Fatal("fast path not taken for a plain name/description block")
	}
	for _, c := range []string{"name: yes\n", "name: 12\n", "name: a # c\n", "name: a\nname: b\n", "name: a: b\n"} {
		if _, ok := simpleBlock([]byte(c)); ok {
			t.Errorf("fast path taken for %q", c)
		}
	}
}

func checkSimple(t *testing.T, front []byte) {
	t.Helper()
	pairs, ok := simpleBlock(front)
	if !ok {
		return
	}
	var fast, slow Frontmatter
	fast.setSimple(pairs)
	if err := slow.parseYAML("x", front); err != nil {
		t.Fatalf("%q: fast path accepted what YAML rejects: %v", front, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q: fast path %+v, YAML %+v", front, fast, slow)
	}
}

func FuzzSimpleBlock(f *testing.F) {
	for _, c := range simpleCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, front []byte) { checkSimple(t, front) })
}

// BenchmarkParseSkillMD: a plain SKILL.md (fast path) and the same
// frontmatter the fast path leaves to YAML (a quoted description).
func BenchmarkParseSkillMD(b *testing.B) {
	body := "# s\nSome guidance.\n"
	for _, c := range []struct{ name, doc string }{
		{"simple", "---\nname: s000\ndescription: skill 0\n---\n" + body},
		{"yaml", "---\nname: s000\ndescription: 'skill 0'\n---\n" + body},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse("SKILL.md", []byte(c.doc)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
