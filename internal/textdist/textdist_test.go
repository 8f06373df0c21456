package textdist

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"submit", "submit", 0},
		{"sbumit", "submit", 1}, // one swap
		{"jbos", "jobs", 1},
		{"stauts", "status", 1},
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
		{"ca", "abc", 3}, // optimal string alignment: no edit of a swapped pair
		{"pool", "pools", 1},
		{"spto", "spot", 1},
		{"größe", "grösse", 2}, // runes, not bytes: ß to s, then an insert
		{"naem", "name", 1},
	} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
		if got := Distance(c.b, c.a); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", c.b, c.a, got, c.d)
		}
	}
}
