package yamlx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fullsend-ai/fullsend/internal/yamlx/yamlxtest"
)

func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := []yamlxtest.ErrorCase{
		{Name: "syntax", In: "a: [1\nb: 2\n", Want: "f.yaml:", Err: ErrSyntax},
		{Name: "duplicate", In: "a: 1\nb: 2\na: 3\n", Want: "f.yaml:3: a: duplicate key: first set on line 1", Err: ErrDuplicate},
		{Name: "nested duplicate", In: "a:\n  x: 1\n  x: 2\n", Want: "f.yaml:3: a.x", Err: ErrDuplicate},
		{Name: "alias", In: "a: &x 1\nb: *x\n", Want: "f.yaml:2: b", Err: ErrValue},
		{Name: "merge", In: "a: &x {k: 1}\nb:\n  <<: {k: 2}\n", Want: "f.yaml:3: b", Err: ErrValue},
		{Name: "not mapping", In: "- a\n", Want: "f.yaml:1", Err: ErrType},
		{Name: "too large", In: strings.Repeat("#", MaxFileSize+1), Want: "f.yaml", Err: ErrTooLarge},
	}
	yamlxtest.CheckErrors(t, cases, func(in []byte) error {
		_, err := Parse("f.yaml", in)
		return err
	})
	n, err := Parse("f.yaml", []byte("---\n# only a comment\n"))
	if err != nil || n != nil {
		t.Fatalf("empty doc: %v %v", n, err)
	}
}

func TestScalars(t *testing.T) {
	t.Parallel()
	root, err := Parse("f.yaml", []byte("s: hi\nn: 5\nb: true\nd: 30s\nl: [a, 1]\nm: {k: v}\nbad: [x]\n"))
	if err != nil {
		t.Fatal(err)
	}
	pairs, _ := Pairs("f.yaml", "", root)
	vals := map[string]int{}
	for i, p := range pairs {
		vals[p[0].Value] = i
	}
	if s, _ := String("f", "s", pairs[vals["s"]][1]); s != "hi" {
		t.Fatal("String")
	}
	if n, _ := Int("f", "n", pairs[vals["n"]][1]); n != 5 {
		t.Fatal("Int")
	}
	if b, _ := Bool("f", "b", pairs[vals["b"]][1]); !b {
		t.Fatal("Bool")
	}
	if d, _ := Duration("f", "d", pairs[vals["d"]][1]); d.Seconds() != 30 {
		t.Fatal("Duration")
	}
	if l, _ := Strings("f", "l", pairs[vals["l"]][1]); len(l) != 2 || l[1] != "1" {
		t.Fatal("Strings")
	}
	if m, _ := StringMap("f", "m", pairs[vals["m"]][1]); m["k"] != "v" {
		t.Fatal("StringMap")
	}
	if _, err := String("f", "bad", pairs[vals["bad"]][1]); !errors.Is(err, ErrType) || !strings.Contains(err.Error(), "f:7: bad") {
		t.Fatalf("String(list) err = %v", err)
	}
	if _, err := Int("f", "s", pairs[vals["s"]][1]); !errors.Is(err, ErrType) {
		t.Fatal("Int(hi)")
	}
	if _, err := Duration("f", "s", pairs[vals["s"]][1]); !errors.Is(err, ErrValue) {
		t.Fatal("Duration(hi)")
	}
	if _, err := Bool("f", "n", pairs[vals["n"]][1]); !errors.Is(err, ErrType) {
		t.Fatal("Bool(5)")
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("a: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(small); err != nil || string(b) != "a: 1\n" {
		t.Fatalf("small: %q %v", b, err)
	}
	// A larger file is read no further than one byte over the bound, and
	// Parse refuses what was read.
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("#", 2*MaxFileSize)), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(big)
	if err != nil || len(b) != MaxFileSize+1 {
		t.Fatalf("big: %d bytes, %v", len(b), err)
	}
	if _, err := Parse(big, b); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("big: Parse: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}
