package lock

import (
	"bytes"
	"strings"
	"testing"
)

// TestOverridesRoundTrip: a skill's override set is rendered under the
// skill's dependency, sorted by path, and reads back the same; an entry
// without overrides renders byte for byte as before.
func TestOverridesRoundTrip(t *testing.T) {
	plain := &File{}
	plain.Put("code", sampleEntry(), "2026-05-12T14:30:00Z")
	before, err := plain.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(before, []byte("overrides")) {
		t.Fatalf("an entry without overrides renders an overrides key:\n%s", before)
	}

	h := sampleEntry()
	sk := &h.Dependencies[2].Deps[0]
	sk.Overrides = []Override{
		{Path: "sub/y.md", Deleted: true},
		{Path: "sub/x.md", Source: "overrides/x.md", SHA256: strings.Repeat("9", 64)},
	}
	f := &File{}
	f.Put("code", h, "2026-05-12T14:30:00Z")
	b, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := "          overrides:\n" +
		"            - path: sub/x.md\n              source: overrides/x.md\n              sha256: \"" + strings.Repeat("9", 64) + "\"\n" +
		"            - path: sub/y.md\n              deleted: true\n" +
		"          transitive_deps:\n"
	if !bytes.Contains(b, []byte(want)) {
		t.Fatalf("overrides not rendered as\n%s\nin\n%s", want, b)
	}
	g, err := Parse("lock.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	if b2, _ := g.Marshal(); !bytes.Equal(b, b2) {
		t.Fatalf("round trip differs:\n%s\n---\n%s", b, b2)
	}
	if got := g.Harnesses["code"].Dependencies[2].Deps[0].Overrides; len(got) != 2 || !got[1].Deleted || got[0].Source != "overrides/x.md" {
		t.Errorf("parsed overrides = %+v", got)
	}
	// The set is part of the entry: another set is another entry.
	other := sampleEntry()
	other.Dependencies[2].Deps[0].Overrides = []Override{{Path: "sub/x.md", Source: "overrides/x.md", SHA256: strings.Repeat("9", 64)}}
	if h.Equal(other) {
		t.Error("entries with different override sets are equal")
	}
}

func TestOverridesParseStrict(t *testing.T) {
	d := strings.Repeat("a", 64)
	pre := "version: 1\nharnesses:\n  h:\n    source: a\n    sha256: " + d + "\n    dependencies:\n      skills:\n        - path: skills/s\n          sha256: " + d + "\n          overrides:\n"
	for name, tc := range map[string]struct{ in, want string }{
		"not a list":       {"            path: x\n", "expected a list"},
		"no path":          {"            - deleted: true\n", "path is required"},
		"neither":          {"            - path: x\n", "needs source and sha256, or deleted: true"},
		"no sha256":        {"            - path: x\n              source: o/x\n", "needs source and sha256"},
		"deleted and file": {"            - path: x\n              deleted: true\n              source: o/x\n", "a deleted file has no source or sha256"},
		"deleted false":    {"            - path: x\n              deleted: false\n", "leave the key out"},
		"bad digest":       {"            - path: x\n              source: o/x\n              sha256: nothex\n", "not 64 hex"},
		"twice":            {"            - path: x\n              deleted: true\n            - path: x\n              deleted: true\n", `path "x" is listed twice`},
		"unknown key":      {"            - path: x\n              deleted: true\n              extra: 1\n", "unknown field"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("lock.yaml", []byte(pre+tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestDiffOverrides(t *testing.T) {
	x := Override{Path: "x", Source: "o/x", SHA256: strings.Repeat("1", 64)}
	y := Override{Path: "y", Deleted: true}
	for _, tc := range []struct {
		name      string
		got, want []Override
		diff      string
	}{
		{"same, any order", []Override{y, x}, []Override{x, y}, ""},
		{"both empty", nil, nil, ""},
		{"new deletion", []Override{x, y}, []Override{x}, "y deleted is not in lock.yaml"},
		{"dropped", []Override{x}, []Override{x, y}, "lock.yaml has y deleted, which the harness no longer does"},
		{"deleted instead", []Override{{Path: "x", Deleted: true}}, []Override{x}, "x deleted, but lock.yaml has x replaced by o/x"},
		{"other file", []Override{{Path: "x", Source: "o/z", SHA256: x.SHA256}}, []Override{x}, "x replaced by o/z (sha256 " + x.SHA256 + "), but lock.yaml has x replaced by o/x"},
	} {
		if d := DiffOverrides(tc.got, tc.want); (tc.diff == "") != (d == "") || !strings.Contains(d, tc.diff) {
			t.Errorf("%s: DiffOverrides = %q, want %q", tc.name, d, tc.diff)
		}
	}
}
