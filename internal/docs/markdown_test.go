package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// page is one markdown file of the repository, split into lines.
type page struct {
	rel   string // path from the repository root, with slashes
	lines []string
}

// repoRoot is the repository's root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// docPages reads the README and every markdown file under docs/ and
// deploy/: the pages a reader is sent to.
func docPages(t *testing.T, root string) []page {
	t.Helper()
	rels := []string{"README.md"}
	for _, dir := range []string{"docs", "deploy"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".md") {
				rel, _ := filepath.Rel(root, path)
				rels = append(rels, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var pages []page
	for _, rel := range rels {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, page{rel, strings.Split(string(b), "\n")})
	}
	return pages
}

// fenceInfo reports whether line opens or closes a fenced code block, and
// the info string (```sh gives "sh").
func fenceInfo(line string) (info string, ok bool) {
	l := strings.TrimLeft(line, " ")
	if len(line)-len(l) > 3 {
		return "", false // indented four or more: code, not a fence
	}
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(l, f) {
			return strings.TrimSpace(strings.TrimLeft(l, f[:1])), true
		}
	}
	return "", false
}

// eachLine calls fn for every line of p with its 1-based number and the
// info string of the fenced block it is in ("" with fenced false outside
// any block). Fence lines themselves are not passed.
func eachLine(p page, fn func(n int, line string, fenced bool, info string)) {
	inFence, info, opener := false, "", ""
	for i, line := range p.lines {
		if inf, ok := fenceInfo(line); ok {
			marker := strings.TrimSpace(line)[:3]
			switch {
			case !inFence:
				inFence, info, opener = true, "", marker
				if w := strings.Fields(inf); len(w) > 0 {
					info = w[0]
				}
				continue
			case marker == opener && inf == "":
				inFence, info = false, ""
				continue
			}
		}
		fn(i+1, line, inFence, info)
	}
}

var (
	headingLine = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	inlineLink  = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// anchors returns the anchors GitHub gives p's headings: the heading's
// text, lower-cased, with everything but letters, digits, spaces, '-'
// and '_' removed and spaces turned into '-'; a repeated one gets -1, -2.
func anchors(p page) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	eachLine(p, func(_ int, line string, fenced bool, _ string) {
		if fenced {
			return
		}
		m := headingLine.FindStringSubmatch(line)
		if m == nil {
			return
		}
		a := slug(m[2])
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	})
	return out
}

func slug(heading string) string {
	heading = inlineLink.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r), unicode.IsNumber(r), unicode.IsMark(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func TestSlugIsGitHubs(t *testing.T) {
	for h, want := range map[string]string{
		"What a job sees (the checkpoint contract)": "what-a-job-sees-the-checkpoint-contract",
		"Guarantees, and how they are kept":         "guarantees-and-how-they-are-kept",
		"`ballast dev` on Kubernetes":               "ballast-dev-on-kubernetes",
		"See [Layout](layout.md) first":             "see-layout-first",
		"Watching the hybrid pool":                  "watching-the-hybrid-pool",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
	p := page{"x.md", strings.Split("# A\n## A\n```sh\n# A\n```\n### A", "\n")}
	got := anchors(p)
	for _, want := range []string{"a", "a-1", "a-2"} {
		if !got[want] {
			t.Errorf("anchors of repeated headings: no %q in %v", want, got)
		}
	}
	if len(got) != 3 {
		t.Errorf("a comment in a code block counted as a heading: %v", got)
	}
}
