package analyze

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

// TestFindingIDsFromTable: the code of the analysis (this package, its
// job package, compare and check) names findings by their constants, so
// that findingKinds lists every id a report can hold: no id is written
// as a literal outside result.go, and no Finding is made with a literal ID.
func TestFindingIDsFromTable(t *testing.T) {
	ids := FindingIDs()
	if len(ids) != len(slices.Compact(slices.Sorted(slices.Values(ids)))) {
		t.Errorf("finding ids %q: an id is listed twice", ids)
	}
	var files []string
	for _, dir := range []string{".", "job", "../advice", "../compare", "../check"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "result.go" {
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

// TestLoaderKinds: a name of each kind of input pipeline is named as that
// kind, so that no row shadows a later one, and every row has a case here.
func TestLoaderKinds(t *testing.T) {
	tests := []struct{ name, kind string }{
		{"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", LoaderSingleProcess},
		{"enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", LoaderMultiProcess},
		{"enumerate(DataPipe)#ShufflerIterDataPipe", "DataPipe"},
		{"IteratorGetNext", LoaderTFData},
		{"Iterator::Model::Prefetch", LoaderTFData},
		{"grain_iterator_next", LoaderGrain},
		{"data_loader.py:120 __next__", LoaderGrain},
		{"prefetch.py:450 __next__", LoaderGrainDataset},
		{"multihost_dataloading.py:200 __next__", "MaxText input pipeline"},
		{"load_batch", LoaderAny},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		if got := LoaderKindOf(tt.name); got != tt.kind {
			t.Errorf("LoaderKindOf(%q) = %q, want %q", tt.name, got, tt.kind)
		}
		seen[tt.kind] = true
	}
	for _, k := range loaderKinds {
		if !seen[k.name] {
			t.Errorf("loader kind %q has no case in this test", k.name)
		}
	}
}
