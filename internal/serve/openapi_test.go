package serve

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tracegap/tracegap/internal/check"
)

// openAPIDoc is what the test reads of the OpenAPI document.
type openAPIDoc struct {
	OpenAPI string `json:"openapi"`
	// Paths map a path to its operations by method, and to the
	// parameters its operations share ("parameters").
	Paths map[string]map[string]json.RawMessage `json:"paths"`
}

// operation is what the test reads of one operation.
type operation struct {
	Parameters []struct {
		Name string `json:"name"`
		In   string `json:"in"`
	} `json:"parameters"`
}

func readOpenAPI(t *testing.T) openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi.json is version %q, want 3.x", doc.OpenAPI)
	}
	return doc
}

// muxRoutes returns the "METHOD /path" patterns routes() registers in
// server.go, read from its source: the mux does not list them.
func muxRoutes(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "server.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || (sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "Handle") {
			return true
		}
		if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			p, _ := strconv.Unquote(lit.Value)
			out = append(out, p)
		}
		return true
	})
	return out
}

// TestOpenAPIMatchesRoutes: every API route the server registers (those
// under /api/v1/, /healthz and /metrics; pages are not the API) is in
// openapi.json with its method, and every operation there is registered.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc := readOpenAPI(t)
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if method != "parameters" {
				documented = append(documented, strings.ToUpper(method)+" "+path)
			}
		}
	}
	var registered []string
	for _, p := range muxRoutes(t) {
		method, path, ok := strings.Cut(p, " ")
		if ok && (strings.HasPrefix(path, "/api/v1/") || path == "/healthz" || path == "/metrics") {
			registered = append(registered, method+" "+path)
		}
	}
	slices.Sort(documented)
	slices.Sort(registered)
	if len(registered) < 8 {
		t.Fatalf("read %d API routes from server.go, want the service's (at least 8): %q", len(registered), registered)
	}
	for _, r := range registered {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(registered, d) {
			t.Errorf("openapi.json documents %s, which the server does not register", d)
		}
	}
}

// TestOpenAPIDocumentsCheckParams: the check endpoint's query parameters
// are the rules' parameters, no more, no fewer.
func TestOpenAPIDocumentsCheckParams(t *testing.T) {
	doc := readOpenAPI(t)
	var got []string
	var op operation
	if err := json.Unmarshal(doc.Paths["/api/v1/traces/{id}/check"]["get"], &op); err != nil {
		t.Fatalf("the check operation: %v", err)
	}
	for _, p := range op.Parameters {
		if p.In == "query" {
			got = append(got, p.Name)
		}
	}
	var want []string
	r := check.DefaultRules()
	for _, p := range r.Params() {
		want = append(want, p.Name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("openapi.json's check parameters = %q, want the rules' %q", got, want)
	}
}

func TestOpenAPIServed(t *testing.T) {
	ts := start(t, Config{Analyze: (&fakeAnalyzer{}).analyze})
	r := get(t, ts.URL+"/api/v1/openapi.json")
	if r.code != 200 || string(r.body) != string(openAPI) {
		t.Errorf("GET /api/v1/openapi.json = %d, %d bytes; want 200 and the document", r.code, len(r.body))
	}
}
