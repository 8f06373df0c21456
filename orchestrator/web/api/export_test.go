package api

import "net/http"

// Patterns are the route patterns of a handler built by Handler.
func Patterns(h http.Handler) []string { return h.(*router).patterns }
