package cas

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/ref"
)

// vectorTree is the tree behind the published test vector. It holds a path
// that is a prefix of another ("SKILL.md", "SKILL.md.orig"), where sorting
// lines and sorting paths disagree.
var vectorTree = map[string][]byte{
	"SKILL.md":          []byte("# Skill\n"),
	"SKILL.md.orig":     []byte("old\n"),
	"scripts/helper.sh": []byte("#!/bin/sh\necho hi\n"),
}

// vectorTreeHash was computed outside Go, in a directory holding
// vectorTree, with the pipeline of the package doc:
//
//	$ printf '# Skill\n' >SKILL.md; printf 'old\n' >SKILL.md.orig
//	$ mkdir scripts; printf '#!/bin/sh\necho hi\n' >scripts/helper.sh
//	$ find . -type f | sed 's|^\./||' |
//	    while IFS= read -r f; do printf '%s:%s\n' "$f" "$(sha256sum <"$f" | cut -d' ' -f1)"; done |
//	    LC_ALL=C sort | sha256sum
//	5b50cac4aafe2a054c0b3ad2bc5775cfe3c1943804d95f636534b562a3ee3d90  -
const vectorTreeHash = "5b50cac4aafe2a054c0b3ad2bc5775cfe3c1943804d95f636534b562a3ee3d90"

func TestTreeHashVector(t *testing.T) {
	// Independent computation: the exact text, written by hand.
	text := "SKILL.md.orig:01d09d19c2139a46aebfb577780d123d7396e97201bc7ead210a2ebff8239dee\n" +
		"SKILL.md:74daeff849609b74a42500aff45eb6229a086907ab1b2badae4c29ed4fc10e3c\n" +
		"scripts/helper.sh:299001868fb8c02fd431c336c6d058f5558c5dff5b5af5e6fe04b870a6a9cbba\n"
	sum := sha256.Sum256([]byte(text))
	want := hex.EncodeToString(sum[:])
	if want != vectorTreeHash {
		t.Fatalf("hand-written text hashes to %s, shell pipeline gave %s", want, vectorTreeHash)
	}
	got, err := TreeHash(vectorTree)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("TreeHash = %s, want %s", got, want)
	}
	// Sorting paths instead of lines gives a different hash.
	wrong := sha256.Sum256([]byte("SKILL.md:74daeff849609b74a42500aff45eb6229a086907ab1b2badae4c29ed4fc10e3c\n" +
		"SKILL.md.orig:01d09d19c2139a46aebfb577780d123d7396e97201bc7ead210a2ebff8239dee\n" +
		"scripts/helper.sh:299001868fb8c02fd431c336c6d058f5558c5dff5b5af5e6fe04b870a6a9cbba\n"))
	if string(got) == hex.EncodeToString(wrong[:]) {
		t.Errorf("TreeHash sorted paths, not lines")
	}
}

func TestTreeHashSingleFile(t *testing.T) {
	// One file: sha256("a.md:" + sha256hex("x") + "\n").
	fh := sha256.Sum256([]byte("x"))
	sum := sha256.Sum256([]byte("a.md:" + hex.EncodeToString(fh[:]) + "\n"))
	got, err := TreeHash(map[string][]byte{"a.md": []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != hex.EncodeToString(sum[:]) {
		t.Errorf("TreeHash = %s, want %x", got, sum)
	}
}

func TestTreeHashRejects(t *testing.T) {
	for name, files := range map[string]map[string][]byte{
		"empty":       {},
		"dotdot":      {"a/../b": nil},
		"absolute":    {"/etc/passwd": nil},
		"backslash":   {`a\b`: nil},
		"case-fold":   {"Skill.md": nil, "SKILL.md": nil},
		"file-as-dir": {"a": nil, "a/b": nil},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := TreeHash(files)
			want := ErrUnsafePath
			if name == "empty" {
				want = ErrEmptyTree
			}
			if !errors.Is(err, want) {
				t.Errorf("TreeHash err = %v, want %v", err, want)
			}
		})
	}
}

var treePathTests = []struct {
	path   string
	reason string // "" = accepted
}{
	{"SKILL.md", ""},
	{"scripts/helper.sh", ""},
	{"a/b/c/d.txt", ""},
	{".hidden", ""},
	{"..a", ""},
	{"a..", ""},
	{"a/...", ""},
	{"weird:name", ""},
	{"ünïcödé/日本.md", ""},
	{strings.Repeat("a", MaxTreeSegmentLen), ""},
	{strings.Repeat("a/", MaxTreePathLen/2-1) + "ab", ""},
	{"", "empty"},
	{"..", `".." segment`},
	{"../x", `".." segment`},
	{"a/../b", `".." segment`},
	{"a/..", `".." segment`},
	{".", `"." segment`},
	{"./a", `"." segment`},
	{"a/./b", `"." segment`},
	{"/a", "absolute"},
	{"/", "absolute"},
	{"a//b", "empty segment"},
	{"a/", "empty segment"},
	{`a\b`, "backslash"},
	{`..\x`, "backslash"},
	{"a\x00b", "NUL"},
	{"a\nb", "line break"},
	{"a\rb", "line break"},
	{"a\tb", "control character"},
	{"a\x7fb", "control character"},
	{"a\u0085b", "control character"},
	{"a\xffb", "UTF-8"},
	{"\xc0\xaf", "UTF-8"},
	{strings.Repeat("a", MaxTreeSegmentLen+1), "segment longer"},
	{strings.Repeat("a/", MaxTreePathLen/2) + "a", "longer than"},
}

func TestCheckTreePath(t *testing.T) {
	for _, tt := range treePathTests {
		wantUnsafe(t, fmt.Sprintf("CheckTreePath(%q)", tt.path), CheckTreePath(tt.path), tt.reason)
	}
}

// wantUnsafe checks the error of call against a table row: nil when reason
// is "", else ErrUnsafePath mentioning reason.
func wantUnsafe(t *testing.T, call string, err error, reason string) {
	t.Helper()
	if reason == "" {
		if err != nil {
			t.Errorf("%s = %v, want nil", call, err)
		}
		return
	}
	if !errors.Is(err, ErrUnsafePath) || !strings.Contains(err.Error(), reason) {
		t.Errorf("%s = %v, want ErrUnsafePath mentioning %q", call, err, reason)
	}
}

func TestCheckTreePaths(t *testing.T) {
	for _, tt := range []struct {
		paths  []string
		reason string
	}{
		{[]string{"a", "b", "c/d", "c/e"}, ""},
		{[]string{"a.md", "a.md.orig", "a-b/c"}, ""},
		{[]string{"SKILL.md", "skill.md"}, "only in case"},
		{[]string{"Docs/a", "docs/b"}, "only in case"},
		{[]string{"docs/a", "DOCS"}, "is a file and also the directory"},
		{[]string{"K", "\u212a"}, "only in case"},       // KELVIN SIGN folds to K
		{[]string{"straße", "STRASSE"}, ""},             // full folding differs; simple folding does not
		{[]string{"ſ", "s"}, "only in case"},            // LATIN SMALL LONG S
		{[]string{"a", "a/b"}, "also a file"},           // file, then a child of it
		{[]string{"a/b", "a"}, "is a file and also"},    // child, then the file
		{[]string{"x/a", "X/a/b"}, "only in case"},      // dir case differs
		{[]string{"ok", "bad/../x"}, `".." segment`},    // per-path rules apply
		{[]string{"a/b/c", "a/b/c/d"}, "also a file"},   // deeper
		{[]string{"a/B/c", "a/b/d"}, "only in case"},    // middle segment
		{[]string{"a/b", "a/c", "a/d/e", "f"}, ""},      // shared dirs are fine
		{[]string{"dup", "dup"}, "appears twice"},       // slices may repeat
		{[]string{"Ωmega", "ωMEGA"}, "only in case"},    // Greek
		{[]string{"ǅ", "ǆ"}, "only in case"},            // title case orbit
		{[]string{"i", "İ"}, ""},                        // dotted capital I is not a simple fold of i
		{[]string{"ﬀ", "ff"}, ""},                       // ligature: no simple fold
		{[]string{"a\u0301", "\u00e1"}, ""},             // normalisation is not folding (gap)
		{[]string{"tree/x", "Tree/y"}, "only in case"},  // any directory
		{[]string{"x", "X", "y"}, "only in case"},       // first collision wins
		{[]string{"a/b/c", "A/B/C"}, "only in case"},    // whole path
		{[]string{"q/R", "Q/r"}, "only in case"},        // both parts
		{[]string{"m.md", "M.MD", "m.md.orig"}, "case"}, // collision amid prefix names
	} {
		wantUnsafe(t, fmt.Sprintf("CheckTreePaths(%q)", tt.paths), CheckTreePaths(tt.paths), tt.reason)
	}
}

// refTreeHash is a second, deliberately naive implementation of the format
// used by the fuzzer.
func refTreeHash(files map[string][]byte) string {
	var lines []string
	for p, c := range files {
		s := sha256.Sum256(c)
		lines = append(lines, p+":"+hex.EncodeToString(s[:]))
	}
	// insertion sort, bytewise
	for i := 1; i < len(lines); i++ {
		for j := i; j > 0 && lines[j] < lines[j-1]; j-- {
			lines[j], lines[j-1] = lines[j-1], lines[j]
		}
	}
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n") + "\n"))
	return hex.EncodeToString(sum[:])
}

func FuzzCheckTreePath(f *testing.F) {
	for _, tt := range treePathTests {
		if len(tt.path) < 512 {
			f.Add(tt.path)
		}
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := CheckTreePath(p)
		if err != nil {
			if !errors.Is(err, ErrUnsafePath) {
				t.Fatalf("error %v is not ErrUnsafePath", err)
			}
			return
		}
		// Accepted paths never escape and are already clean.
		if path.Clean(p) != p || filepath.Clean(p) != filepath.FromSlash(p) {
			t.Fatalf("accepted %q is not clean", p)
		}
		if filepath.IsAbs(p) || !filepath.IsLocal(p) {
			t.Fatalf("accepted %q is not local", p)
		}
		j := filepath.Join("/root/tree", p)
		if !strings.HasPrefix(j, "/root/tree/") {
			t.Fatalf("accepted %q escapes: %s", p, j)
		}
		if strings.ContainsAny(p, "\\\x00\n") {
			t.Fatalf("accepted %q holds a forbidden byte", p)
		}
	})
}

func FuzzTreeHash(f *testing.F) {
	f.Add("SKILL.md", []byte("a"), "scripts/x.sh", []byte("b"), "SKILL.md.orig", []byte("c"))
	f.Add("a", []byte(""), "A", []byte(""), "b", []byte("x"))
	f.Add("a", []byte("1"), "a/b", []byte("2"), "c", []byte("3"))
	f.Fuzz(func(t *testing.T, p1 string, c1 []byte, p2 string, c2 []byte, p3 string, c3 []byte) {
		files := map[string][]byte{p1: c1, p2: c2, p3: c3}
		d, err := TreeHash(files)
		if err != nil {
			if !errors.Is(err, ErrUnsafePath) {
				t.Fatalf("error %v is not ErrUnsafePath", err)
			}
			return
		}
		// Every accepted path is safe on its own.
		for p := range files {
			if CheckTreePath(p) != nil {
				t.Fatalf("TreeHash accepted unsafe %q", p)
			}
		}
		if _, err := ref.ParseDigest(string(d)); err != nil {
			t.Fatalf("TreeHash returned %q: %v", d, err)
		}
		// Independent of map construction order.
		rev := map[string][]byte{}
		rev[p3], rev[p2], rev[p1] = c3, c2, c1
		if p1 == p2 || p1 == p3 || p2 == p3 { // duplicate keys: last write wins in files
			rev = files
		}
		d2, err := TreeHash(rev)
		if err != nil || d2 != d {
			t.Fatalf("TreeHash not deterministic: %s vs %s (%v)", d, d2, err)
		}
		if want := refTreeHash(files); string(d) != want {
			t.Fatalf("TreeHash = %s, reference = %s", d, want)
		}
	})
}
