package harness

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyResolveMaterializes: outside package harness, only package
// resolve (which has replaced every reference by then) turns a harness as
// written into a Materialized, and no package converts between the two
// types by hand; tests may build one from a parsed harness.
func TestOnlyResolveMaterializes(t *testing.T) {
	t.Parallel()
	found := 0
	for _, top := range []string{"..", filepath.Join("..", "..", "cmd")} {
		err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return fs.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			af, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			inResolve := filepath.ToSlash(filepath.Dir(path)) == "../resolve"
			ast.Inspect(af, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				fun := call.Fun
				if p, ok := fun.(*ast.ParenExpr); ok {
					fun = p.X
				}
				if s, ok := fun.(*ast.StarExpr); ok {
					fun = s.X
				}
				sel, ok := fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "harness" {
					return true
				}
				switch sel.Sel.Name {
				case "Materialize":
					found++
					if !inResolve {
						t.Errorf("%s: harness.Materialize outside package resolve", path)
					}
				case "Materialized", "Harness":
					t.Errorf("%s: converts to harness.%s by hand", path, sel.Sel.Name)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if found == 0 {
		t.Fatal("no call of harness.Materialize found: the walk missed package resolve")
	}
}
