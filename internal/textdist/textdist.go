// Package textdist measures how far apart two short words are, for the
// "did you mean" suggestions of the CLI and the config loader.
package textdist

// Distance is the optimal string alignment distance between a and b, in
// runes: insertions, deletions, substitutions and swaps of two neighbours
// each cost one. The swap matters most, as the commonest typing slip
// ("sbumit" is one edit from "submit", not two).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows of the (len(ra)+1) x (len(rb)+1) table are enough: a swap
	// looks two rows back. back, prev and cur are rows i-2, i-1 and i.
	back := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], back[j-2]+1)
			}
		}
		back, prev, cur = prev, cur, back
	}
	return prev[len(rb)]
}

// Nearest is the candidate nearest to word by Distance, if it is nearer
// than limit; the first of equally near candidates wins, so a sorted list
// gives the same answer each time. "" means none is near enough to be
// worth suggesting.
func Nearest(word string, candidates []string, limit int) string {
	best := ""
	for _, c := range candidates {
		if d := Distance(word, c); d < limit {
			best, limit = c, d
		}
	}
	return best
}
