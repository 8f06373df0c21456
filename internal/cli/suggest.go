package cli

import (
	"flag"
	"strings"
)

// closest returns the candidate a mistyped word most likely meant, or ""
// when none is near enough to be worth suggesting. A word that starts a
// single candidate ("templ") names it; otherwise the nearest candidate by
// edit distance wins, within a third of the word's length (at least one
// edit), so that "sbumit" finds submit but "frobnicate" finds nothing.
func closest(word string, candidates []string) string {
	if word == "" {
		return ""
	}
	var prefixed []string
	for _, c := range candidates {
		if strings.HasPrefix(c, word) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	best, bestD := "", max(1, len(word)/3)+1
	for _, c := range candidates {
		if d := editDistance(word, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of two neighbours each cost one. The
// swap matters most: it is the commonest typing slip ("sbumit").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j].
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// flagHint turns the flag package's "flag provided but not defined: -wiat"
// into a suggestion of the flag the caller probably meant; "" for any other
// parse error or when no flag is close.
func flagHint(fs *flag.FlagSet, err error) string {
	const undefined = "flag provided but not defined: "
	msg := err.Error()
	if !strings.HasPrefix(msg, undefined) {
		return ""
	}
	typed := strings.TrimLeft(strings.TrimPrefix(msg, undefined), "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if s := closest(typed, names); s != "" {
		return " (did you mean --" + s + "?)"
	}
	return ""
}
