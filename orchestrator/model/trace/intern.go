package trace

// interner hands out one shared copy of each distinct string. A million-job
// trace has a handful of teams and templates; without it every job would
// hold its own copy (or, worse, a slice of its whole input line).
type interner map[string]string

// get returns the shared copy of b, making one the first time.
func (in interner) get(b []byte) string {
	// The compiler does not allocate for a map lookup keyed by string(b).
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	in[s] = s
	return s
}
