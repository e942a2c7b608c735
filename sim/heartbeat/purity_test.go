package heartbeat

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPurity keeps the package a pure state machine: no actor library, no
// clock, no goroutines, no global random source (math/rand/v2 only as the
// *rand.Rand type the caller passes in).
func TestPurity(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		checked++
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		randName := ""
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			switch {
			case strings.HasPrefix(path, "github.com/anthdm/hollywood"), path == "math/rand", path == "time", path == "sync":
				t.Errorf("%s imports %s", name, path)
			case path == "math/rand/v2":
				randName = "rand"
				if imp.Name != nil {
					randName = imp.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s starts a goroutine", name)
			case *ast.SelectorExpr:
				if id, ok := n.X.(*ast.Ident); ok && randName != "" && id.Name == randName && n.Sel.Name != "Rand" {
					t.Errorf("%s uses %s.%s (only the *rand.Rand type is allowed)", name, randName, n.Sel.Name)
				}
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no source files checked")
	}
}
