package pin

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const (
	newSkill = "https://github.test/o/r/tree/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb/skills/x#sha256=2222222222222222222222222222222222222222222222222222222222222222"
	addSkill = "https://github.test/o/r/tree/cccccccccccccccccccccccccccccccccccccccc/skills/y#sha256=3333333333333333333333333333333333333333333333333333333333333333"
	agentURL = "https://github.test/o/r/blob/dddddddddddddddddddddddddddddddddddddddd/agents/a.md#sha256=4444444444444444444444444444444444444444444444444444444444444444"
	baseURL  = "https://github.test/o/r/blob/dddddddddddddddddddddddddddddddddddddddd/base.yaml#sha256=5555555555555555555555555555555555555555555555555555555555555555"
	schema   = "https://github.test/o/r/blob/dddddddddddddddddddddddddddddddddddddddd/s.json#sha256=6666666666666666666666666666666666666666666666666666666666666666"
)

func field(t *testing.T, name string) Field {
	t.Helper()
	f, err := LookupField(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestEditGolden edits a commented harness and compares with golden files:
// every comment, blank line, quoting and key order is kept; only the
// edited lines change.
func TestEditGolden(t *testing.T) {
	src, err := os.ReadFile("testdata/commented.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		golden string
		edit   func(d *Doc) error
	}{
		{"replace-skill", func(d *Doc) error {
			for _, e := range d.Entries() {
				if e.Ref == "main" {
					return d.Replace(e, newSkill, "main")
				}
			}
			t.Fatal("no entry with pin: main")
			return nil
		}},
		{"append-skill", func(d *Doc) error {
			if err := d.Put(field(t, "skills"), -1, addSkill, "v1.2"); err != nil {
				return err
			}
			return d.AddAllowed("https://github.test/o/r/")
		}},
		{"set-agent", func(d *Doc) error { return d.Set(field(t, "agent"), agentURL, "main") }},
		{"add-base", func(d *Doc) error { return d.Set(field(t, "base"), baseURL, "main") }},
		{"add-schema", func(d *Doc) error { return d.Set(field(t, "validation_loop.schema"), schema, "") }},
		{"overlay-skill", func(d *Doc) error { return d.Put(field(t, "forge.github.skills"), -1, addSkill, "main") }},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			d, err := Parse(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.edit(d); err != nil {
				t.Fatal(err)
			}
			got := d.Bytes()
			path := filepath.Join("testdata", tc.golden+".golden.yaml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("%s differs:\n%s", path, Diff(want, got))
			}
			// Every comment of the source is still there.
			for _, l := range strings.Split(string(src), "\n") {
				if i := strings.Index(l, "# "); i >= 0 && !strings.Contains(string(got), strings.TrimSpace(l[i:])) && !strings.Contains(l, "pin: main") {
					t.Errorf("comment %q lost", l[i:])
				}
			}
			// The result is the same document with one more or one
			// changed value.
			var before, after map[string]any
			if yaml.Unmarshal(src, &before) != nil || yaml.Unmarshal(got, &after) != nil {
				t.Fatal("does not parse")
			}
			if len(after) < len(before) {
				t.Fatalf("keys lost: %v", after)
			}
		})
	}
}

func TestPinComment(t *testing.T) {
	for _, tc := range []struct{ in, ref, want, got string }{
		{"", "main", "# pin: main", ""},
		{"# shared", "v1", "# shared; pin: v1", ""},
		{"# shared; pin: main", "v2", "# shared; pin: v2", "main"},
		{"# pin: main", "", "", "main"},
		{"# pin main", "x", "# pin main; pin: x", ""},
	} {
		if got := withPin(tc.in, tc.ref); got != tc.want {
			t.Errorf("withPin(%q, %q) = %q, want %q", tc.in, tc.ref, got, tc.want)
		}
		if got := pinRef(tc.in); got != tc.got {
			t.Errorf("pinRef(%q) = %q, want %q", tc.in, got, tc.got)
		}
	}
}

func TestEditRefusals(t *testing.T) {
	for _, tc := range []struct{ src, field, want string }{
		{"skills: [a]\n", "skills", "flow list"},
		{"agent: a\n", "validation_loop.schema", "no validation_loop mapping"},
		{"skills:\n  - |\n    x\n", "skills", "block scalar"},
	} {
		d, err := Parse([]byte(tc.src))
		if err != nil {
			t.Fatal(err)
		}
		f := field(t, tc.field)
		if f.List {
			err = d.Put(f, -1, addSkill, "main")
		} else {
			err = d.Set(f, schema, "main")
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %s: %v, want %q", tc.src, tc.field, err, tc.want)
		}
	}
	for _, name := range []string{"pre_script", "validation_loop.script", "host_files"} {
		if _, err := LookupField(name); err == nil || !strings.Contains(err.Error(), "must be local") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := LookupField("skillz"); err == nil || !strings.Contains(err.Error(), "skills") {
		t.Errorf("unknown field: %v", err)
	}
}

func TestFlowAllowedAndEmptyKeys(t *testing.T) {
	d, err := Parse([]byte("allowed_remote_resources: []\nskills:\nagent:\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.AddAllowed("https://a.test/o/"); err != nil {
		t.Fatal(err)
	}
	if err := d.AddAllowed("https://b.test/o/"); err != nil {
		t.Fatal(err)
	}
	if err := d.Put(field(t, "skills"), -1, addSkill, "main"); err != nil {
		t.Fatal(err)
	}
	if err := d.Set(field(t, "agent"), agentURL, ""); err != nil {
		t.Fatal(err)
	}
	want := "allowed_remote_resources: [https://a.test/o/, https://b.test/o/]\nskills:\n  - " + addSkill + "  # pin: main\nagent: " + agentURL + "\n"
	if got := string(d.Bytes()); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
