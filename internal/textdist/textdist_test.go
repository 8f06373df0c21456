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

func TestNearest(t *testing.T) {
	cands := []string{"pools", "provider", "nats", "redis"}
	for _, c := range []struct {
		word  string
		limit int
		want  string
	}{
		{"pool", 2, "pools"},
		{"provdier", 2, "provider"}, // one swap
		{"provdier", 1, ""},         // not nearer than the limit
		{"frobnicate", 5, ""},
		{"nast", 3, "nats"},
		{"", 5, "nats"}, // the only candidate under five edits from nothing
	} {
		if got := Nearest(c.word, cands, c.limit); got != c.want {
			t.Errorf("Nearest(%q, limit %d) = %q, want %q", c.word, c.limit, got, c.want)
		}
	}
	if got := Nearest("ab", []string{"ax", "ay"}, 5); got != "ax" {
		t.Errorf("a tie went to %q, want the first, ax", got)
	}
}
