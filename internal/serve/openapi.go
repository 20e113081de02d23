package serve

import (
	_ "embed"
	"net/http"
)

// openAPI describes the API in OpenAPI 3, written by hand; a test holds it
// to the routes the server registers.
//
//go:embed openapi.json
var openAPI []byte

// handleOpenAPI is GET /api/v1/openapi.json.
func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}
