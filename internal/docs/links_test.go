package docs

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// linkTarget finds inline links and images, [text](target "title").
	linkTarget = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// refDefinition is a reference-style link's definition, [name]: target.
	refDefinition = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)`)
	codeSpan      = regexp.MustCompile("`+[^`]*`+")
	hasScheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// linkProblems checks every relative link of pages, outside code: its
// file must exist inside the repository at root and, when the link has a
// #anchor, be a markdown file with a heading of that anchor.
func linkProblems(root string, pages []page) (problems []string, checked int) {
	byRel := map[string]page{}
	for _, p := range pages {
		byRel[p.rel] = p
	}
	headings := map[string]map[string]bool{}
	anchorsOf := func(rel string) (map[string]bool, error) {
		if a, ok := headings[rel]; ok {
			return a, nil
		}
		p, ok := byRel[rel]
		if !ok {
			b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
			if err != nil {
				return nil, err
			}
			p = page{rel, strings.Split(string(b), "\n")}
		}
		headings[rel] = anchors(p)
		return headings[rel], nil
	}
	for _, p := range pages {
		eachLine(p, func(n int, line string, fenced bool, _ string) {
			if fenced {
				return
			}
			line = codeSpan.ReplaceAllString(line, "")
			var targets []string
			for _, m := range linkTarget.FindAllStringSubmatch(line, -1) {
				targets = append(targets, m[1])
			}
			if m := refDefinition.FindStringSubmatch(line); m != nil {
				targets = append(targets, m[1])
			}
			for _, target := range targets {
				if hasScheme.MatchString(target) {
					continue // a URL: not ours to check
				}
				checked++
				if msg := checkLink(root, p.rel, target, anchorsOf); msg != "" {
					problems = append(problems, fmt.Sprintf("%s:%d: (%s) %s", p.rel, n, target, msg))
				}
			}
		})
	}
	return problems, checked
}

// checkLink says what is wrong with one link from the page at from, or "".
func checkLink(root, from, target string, anchorsOf func(rel string) (map[string]bool, error)) string {
	file, anchor, _ := strings.Cut(target, "#")
	rel := from
	if file != "" {
		if strings.HasPrefix(file, "/") {
			return "an absolute path: link relative to the page"
		}
		rel = path.Clean(path.Join(path.Dir(from), file))
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return "leaves the repository"
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			return "no such file: " + rel
		}
	}
	if anchor == "" {
		return ""
	}
	if !strings.HasSuffix(rel, ".md") {
		return "an anchor into " + rel + ", which is not markdown"
	}
	a, err := anchorsOf(rel)
	if err != nil {
		return err.Error()
	}
	if !a[anchor] {
		return fmt.Sprintf("%s has no heading with anchor #%s", rel, anchor)
	}
	return ""
}

// TestLinksResolve checks the links of the README, docs/ and deploy/.
func TestLinksResolve(t *testing.T) {
	root := repoRoot(t)
	problems, checked := linkProblems(root, docPages(t, root))
	for _, p := range problems {
		t.Error(p)
	}
	if checked < 50 {
		t.Errorf("only %d relative links found: is the link pattern still right?", checked)
	}
	t.Logf("%d relative links checked", checked)
}

// TestLinkProblemsAreFound shows the check failing on each kind of
// broken link, and passing what is right, on pages of its own.
func TestLinkProblemsAreFound(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := "# Title\n\n## Here it is\n\nSee [b](b.md#there), [self](#here-it-is), [code](../go.mod).\n"
	b := "# B\n\n## There\n\n```sh\n# Not a heading\n```\n"
	for name, text := range map[string]string{"docs/a.md": a, "docs/b.md": b, "go.mod": "module x\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bad := strings.Join([]string{
		"[gone](missing.md)",
		"[no anchor](b.md#nowhere)",
		"[comment](b.md#not-a-heading)",
		"[self](#elsewhere)",
		"[out](../../x.md)",
		"[go](../go.mod#x)",
		"`[in code](ignored.md)` and <https://example.com> and [web](https://example.com/x.md)",
	}, "\n")
	pages := []page{
		{"docs/a.md", strings.Split(a, "\n")},
		{"docs/b.md", strings.Split(b, "\n")},
		{"docs/c.md", strings.Split("# C\n"+bad, "\n")},
	}
	problems, checked := linkProblems(root, pages)
	if checked != 9 {
		t.Errorf("checked %d links, want 9 (3 good, 6 bad; code and URLs skipped)", checked)
	}
	if len(problems) != 6 {
		t.Errorf("want 6 problems, all in c.md, got %d:\n%s", len(problems), strings.Join(problems, "\n"))
	}
	for _, p := range problems {
		if !strings.HasPrefix(p, "docs/c.md:") {
			t.Errorf("a good link was reported: %s", p)
		}
	}
}
