package cli

import (
	"flag"
	"strings"

	"github.com/ballastdev/ballast/internal/textdist"
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
	return textdist.Nearest(word, candidates, max(1, len(word)/3)+1)
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
