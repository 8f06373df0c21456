package api

import (
	_ "embed" // the OpenAPI document
	"net/http"
)

// OpenAPIPath is where the API describes itself.
const OpenAPIPath = "/api/v1/openapi.json"

// openAPI is the OpenAPI 3.1 document of every endpoint Handler serves,
// written by hand and checked against the routes by TestOpenAPICoversEveryRoute.
//
//go:embed openapi.json
var openAPI []byte

// serveOpenAPI serves the document without a token: it says what the
// endpoints are, not what they hold, and a client needs it before it has
// been given a token.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPI)
}
