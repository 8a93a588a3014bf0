package lock

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sampleEntry() *Harness {
	h64 := func(c string) string { return strings.Repeat(c, 64) }
	return &Harness{Source: "harness/code.yaml", SHA256: h64("a"), Dependencies: []Group{
		{Field: "agent", Deps: []Dep{{URL: "https://github.com/o/r/blob/x/agents/code.md", SHA256: h64("b"), Type: "file", ResolvedAt: "2026-05-12T14:29:55Z"}}},
		{Field: "policy", Deps: []Dep{{Path: "policies/base.yaml", SHA256: h64("1"), Type: "file"}}},
		{Field: "skills", List: true, Deps: []Dep{{
			URL: "https://github.com/o/r/tree/x/skills/rust", SHA256: h64("c"), Type: "directory", Commit: strings.Repeat("7", 40), ResolvedAt: "2026-05-12T14:29:56Z",
			Files:          []FileHash{{Path: "scripts/check.sh", SHA256: h64("d")}, {Path: "SKILL.md", SHA256: h64("e")}},
			TransitiveDeps: []Dep{{Field: "dependencies[0]", URL: "https://github.com/o/r/blob/x/base.md", SHA256: h64("f"), Type: "file", ResolvedAt: "2026-05-12T14:29:57Z"}},
		}}},
	}}
}

func TestMarshalParseRoundTrip(t *testing.T) {
	f := &File{}
	f.Put("code", sampleEntry(), "2026-05-12T14:30:00Z")
	b, err := f.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte(Header+"version: 1\ngenerated_at: \"2026-05-12T14:30:00Z\"\nharnesses:\n  code:\n    source: harness/code.yaml\n")) {
		t.Fatalf("unexpected rendering:\n%s", b)
	}
	if !bytes.Contains(b, []byte("type: directory\n          commit: \""+strings.Repeat("7", 40)+"\"\n          resolved_at:")) {
		t.Errorf("commit not rendered after type:\n%s", b)
	}
	// Files are sorted by path in the output.
	if i, j := bytes.Index(b, []byte("path: SKILL.md")), bytes.Index(b, []byte("path: scripts/check.sh")); i < 0 || j < 0 || i > j {
		t.Errorf("files not sorted:\n%s", b)
	}
	g, err := Parse("lock.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := g.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatalf("round trip differs:\n%s\n---\n%s", b, b2)
	}
	if got := g.Harnesses["code"].Index()["https://github.com/o/r/blob/x/base.md"]; got != strings.Repeat("f", 64) {
		t.Errorf("index of transitive dep = %q", got)
	}
}

func TestParseStrict(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"unknown key":  {"version: 1\nextra: x\n", "unknown field"},
		"bad version":  {"version: 2\n", "version 2 is not supported"},
		"bad digest":   {"version: 1\nharnesses:\n  h:\n    source: a\n    sha256: nothex\n", "not 64 hex"},
		"url and path": {"version: 1\nharnesses:\n  h:\n    source: a\n    sha256: " + strings.Repeat("a", 64) + "\n    dependencies:\n      agent:\n        url: https://x/\n        path: p\n        sha256: " + strings.Repeat("a", 64) + "\n", "exactly one of url and path"},
		"no version":   {"harnesses: {}\n", "version: invalid value: missing"},
		"bad commit":   {"version: 1\nharnesses:\n  h:\n    source: a\n    sha256: " + strings.Repeat("a", 64) + "\n    dependencies:\n      agent:\n        url: https://x/\n        sha256: " + strings.Repeat("a", 64) + "\n        commit: main\n", `commit "main": want a full lower-case commit id`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("lock.yaml", []byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestKeepTimesAndPutAreStable(t *testing.T) {
	f := &File{}
	f.Put("code", sampleEntry(), "2026-05-12T14:30:00Z")
	first, _ := f.Marshal()
	// Re-resolving later gives new timestamps for the same content.
	again := sampleEntry()
	again.Dependencies[0].Deps[0].ResolvedAt = "2030-01-01T00:00:00Z"
	again.Dependencies[2].Deps[0].TransitiveDeps[0].ResolvedAt = "2030-01-01T00:00:00Z"
	if !again.KeepTimes(f.Harnesses["code"]) {
		t.Fatal("unchanged entry not recognised")
	}
	if f.Put("code", again, "2030-01-01T00:00:00Z") {
		t.Fatal("Put reported a change")
	}
	second, _ := f.Marshal()
	if !bytes.Equal(first, second) {
		t.Fatalf("not byte-identical:\n%s\n---\n%s", first, second)
	}
	// A changed hash is a change and gets the new time.
	changed := sampleEntry()
	changed.Dependencies[0].Deps[0].SHA256 = strings.Repeat("9", 64)
	changed.Dependencies[0].Deps[0].ResolvedAt = "2030-01-01T00:00:00Z"
	if changed.KeepTimes(f.Harnesses["code"]) || !f.Put("code", changed, "2030-01-01T00:00:00Z") || f.GeneratedAt != "2030-01-01T00:00:00Z" {
		t.Fatal("change not recorded")
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	f := &File{}
	f.Put("code", sampleEntry(), "2026-05-12T14:30:00Z")
	if err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(path)
	f.Put("other", &Harness{Source: "harness/other.yaml", SHA256: strings.Repeat("7", 64)}, "2026-06-01T00:00:00Z")
	testOnlyBeforeRename = func(string) error { return errors.New("disk on fire") }
	defer func() { testOnlyBeforeRename = func(string) error { return nil } }()
	err := Write(path, f)
	if err == nil || !strings.Contains(err.Error(), "previous lock file is unchanged") {
		t.Fatalf("err = %v", err)
	}
	now, _ := os.ReadFile(path)
	if !bytes.Equal(old, now) {
		t.Fatal("old lock file changed")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
	testOnlyBeforeRename = func(string) error { return nil }
	if err := Write(path, f); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil || len(got.Harnesses) != 2 {
		t.Fatalf("after write: %v %+v", err, got)
	}
}

func TestKey(t *testing.T) {
	f := &File{Harnesses: map[string]*Harness{"code": {Source: "harness/code.yaml"}}}
	if k := f.Key("harness/code.yaml"); k != "code" {
		t.Errorf("key = %q", k)
	}
	if k := f.Key("other/code.yaml"); k != "other/code.yaml" {
		t.Errorf("colliding key = %q", k)
	}
	if k := f.Key("https://h/o/r/blob/x/triage.yaml#sha256=" + strings.Repeat("a", 64)); k != "triage" {
		t.Errorf("url key = %q", k)
	}
}

// TestWriteCreatesFullsendDir: on a fresh clone the fullsend dir may not
// exist yet; Write creates it instead of failing on the temporary file.
func TestWriteCreatesFullsendDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clone", ".fullsend", FileName)
	f := &File{}
	f.Put("code", sampleEntry(), "2026-05-12T14:30:00Z")
	if err := Write(path, f); err != nil {
		t.Fatalf("Write into a missing directory: %v", err)
	}
	got, err := Read(path)
	if err != nil || got.Harnesses["code"] == nil {
		t.Fatalf("after write: %v %+v", err, got)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
}
