package forge_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/config"
	"github.com/fullsend-ai/fullsend/internal/forge"
	"github.com/fullsend-ai/fullsend/internal/ref"
)

func TestLocationAs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		kind forge.Kind
		want string // rendering of the same place as kind
	}{
		// GitHub.
		{"https://github.com/o/r/blob/" + sha + "/skills/rust/SKILL.md", forge.Tree, "https://github.com/o/r/tree/" + sha + "/skills/rust/SKILL.md"},
		{"https://github.com/o/r/blob/main/skills/rust", forge.Tree, "https://github.com/o/r/tree/main/skills/rust"},
		{"https://github.com/o/r/tree/main/skills/rust/", forge.Blob, "https://github.com/o/r/blob/main/skills/rust"},
		{"https://github.com/o/r/tree/main/a/b.md", forge.Raw, "https://raw.githubusercontent.com/o/r/main/a/b.md"},
		{"https://raw.githubusercontent.com/o/r/" + sha + "/harness/h.yaml", forge.Blob, "https://github.com/o/r/blob/" + sha + "/harness/h.yaml"},
		{"https://raw.githubusercontent.com/o/r/v1.0/skills/x", forge.Tree, "https://github.com/o/r/tree/v1.0/skills/x"},
		{"https://GitHub.com:443/o/r/blob/main/my%20skill", forge.Tree, "https://github.com/o/r/tree/main/my%20skill"},
		{"https://github.com/o/r/tree/main", forge.Tree, "https://github.com/o/r/tree/main"},
		{"https://github.com/o/r/blob/main/x", forge.Blob, "https://github.com/o/r/blob/main/x"},
		// GitHub Enterprise with a port: raw files live on raw.HOST.
		{"https://ghe.corp:8443/o/r/tree/main/x", forge.Raw, "https://raw.ghe.corp:8443/o/r/main/x"},
		{"https://raw.ghe.corp:8443/o/r/main/x/y.md", forge.Blob, "https://ghe.corp:8443/o/r/blob/main/x/y.md"},
		{"https://raw.ghe.corp:8443/o/r/main/x", forge.Tree, "https://ghe.corp:8443/o/r/tree/main/x"},
		// GitLab, nested groups kept whole.
		{"https://gitlab.com/g/sub/sub2/p/-/blob/" + sha + "/skills/a", forge.Tree, "https://gitlab.com/g/sub/sub2/p/-/tree/" + sha + "/skills/a"},
		{"https://gitlab.com/g/sub/p/-/tree/main/a.md", forge.Raw, "https://gitlab.com/g/sub/p/-/raw/main/a.md"},
		{"https://gitlab.com/g/p/-/raw/main/x", forge.Tree, "https://gitlab.com/g/p/-/tree/main/x"},
		{"https://git.corp.example/team/sub/p/-/raw/main/x/y.md", forge.Blob, "https://git.corp.example/team/sub/p/-/blob/main/x/y.md"},
	} {
		t.Run(tc.in+"->"+tc.kind.String(), func(t *testing.T) {
			loc, err := forge.Parse(tc.in, testForges)
			if err != nil {
				t.Fatal(err)
			}
			got, err := loc.As(tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			if got.URL != tc.want || got.Kind != tc.kind {
				t.Errorf("As(%s) = %s %q, want %q", tc.kind, got.Kind, got.URL, tc.want)
			}
			// Same as parsing the other form directly.
			want, err := forge.Parse(tc.want, testForges)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("As gives %+v, Parse gives %+v", got, want)
			}
			// And back again.
			back, err := got.As(loc.Kind)
			if err != nil || !reflect.DeepEqual(back, loc) {
				t.Errorf("round trip: %+v, %v; want %+v", back, err, loc)
			}
		})
	}
}

func TestLocationAsErrors(t *testing.T) {
	root, err := forge.Parse("https://gitlab.com/g/sub/p/-/tree/main", testForges)
	if err != nil {
		t.Fatal(err)
	}
	file, err := forge.Parse("https://github.com/o/r/blob/main/x.md", testForges)
	if err != nil {
		t.Fatal(err)
	}
	badPath := file
	badPath.Path = "../../etc/passwd"
	dotOwner := file
	dotOwner.Owner = "o/../../x"
	slashOwner := file
	slashOwner.Owner = "o/x" // a GitLab-style namespace on GitHub
	badKind := file
	badKind.Forge = config.Forge{Host: "example.com", Type: "gitea"}
	for _, c := range []struct {
		name string
		loc  forge.Location
		kind forge.Kind
		err  error
	}{
		{"root as blob", root, forge.Blob, forge.ErrKind},
		{"root as raw", root, forge.Raw, forge.ErrKind},
		{"unknown kind", file, forge.Kind(9), forge.ErrKind},
		{"no forge", forge.Location{Kind: forge.Blob, Owner: "o", Repo: "r", Ref: "main", Path: "x"}, forge.Tree, forge.ErrNotForge},
		{"escaping path", badPath, forge.Tree, forge.ErrBadURL},
		{"owner with dot segments", dotOwner, forge.Tree, ref.ErrEscapes},
		{"owner with a slash", slashOwner, forge.Tree, forge.ErrBadURL},
		{"unsupported forge type", badKind, forge.Tree, forge.ErrBadURL},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.loc.As(c.kind)
			var fe *forge.Error
			if !errors.Is(err, c.err) || !errors.As(err, &fe) {
				t.Fatalf("As(%s) = %+v, %v; want %v", c.kind, got, err, c.err)
			}
		})
	}
	// A root tree as a tree is fine.
	if got, err := root.As(forge.Tree); err != nil || !reflect.DeepEqual(got, root) {
		t.Errorf("root as tree: %+v, %v", got, err)
	}
}

// TestLocationAsEveryParse: for every location Parse accepts in the parse
// table, every kind it can take renders to a URL that parses back to that
// very location, and converting back restores the original.
func TestLocationAsEveryParse(t *testing.T) {
	n := 0
	for _, tc := range parseTests {
		if tc.err != nil {
			continue
		}
		loc, err := forge.Parse(tc.in, testForges)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []forge.Kind{forge.Tree, forge.Blob, forge.Raw} {
			got, err := loc.As(k)
			if loc.Path == "" && k != forge.Tree {
				if !errors.Is(err, forge.ErrKind) {
					t.Errorf("%s as %s: %v, want %v", tc.in, k, err, forge.ErrKind)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s as %s: %v", tc.in, k, err)
				continue
			}
			again, err := forge.Parse(got.URL, testForges)
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Errorf("%s as %s = %q does not parse back: %+v, %v", tc.in, k, got.URL, again, err)
			}
			if back, err := got.As(loc.Kind); err != nil || !reflect.DeepEqual(back, loc) {
				t.Errorf("%s as %s and back: %+v, %v", tc.in, k, back, err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no conversions checked")
	}
}
