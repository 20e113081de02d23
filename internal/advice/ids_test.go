package advice

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFindingIDsFromTable: the code that writes or reads findings (this
// package, jobadvice, analyze, its job package, compare and check) names
// them by their constants, so that findingKinds lists every id a report
// can hold: no id is written as a literal outside ids.go, and no Finding
// is made with a literal ID.
func TestFindingIDsFromTable(t *testing.T) {
	ids := FindingIDs()
	if len(ids) != len(slices.Compact(slices.Sorted(slices.Values(ids)))) {
		t.Errorf("finding ids %q: an id is listed twice", ids)
	}
	var files []string
	for _, dir := range []string{".", "jobadvice", "../analyze", "../analyze/job", "../compare", "../check"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "ids.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && slices.Contains(ids, s) {
					t.Errorf("%s: the finding id %q is written out: use its constant", fset.Position(n.Pos()), s)
				}
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "ID" {
					if lit, ok := n.Value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						t.Errorf("%s: a finding with the literal id %s: add it to findingKinds and use its constant", fset.Position(n.Pos()), lit.Value)
					}
				}
			}
			return true
		})
	}
}
