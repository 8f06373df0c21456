package api

import "net/http"

// router is a ServeMux that remembers the patterns it was given, so that
// a test can hold the OpenAPI document to every route the API serves: a
// route added without its documentation fails the test.
type router struct {
	*http.ServeMux
	patterns []string
}

func newRouter() *router { return &router{ServeMux: http.NewServeMux()} }

// Handle registers h for pattern, as http.ServeMux.Handle does.
func (r *router) Handle(pattern string, h http.Handler) {
	r.patterns = append(r.patterns, pattern)
	r.ServeMux.Handle(pattern, h)
}

// HandleFunc registers f for pattern, as http.ServeMux.HandleFunc does.
func (r *router) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	r.patterns = append(r.patterns, pattern)
	r.ServeMux.HandleFunc(pattern, f)
}
