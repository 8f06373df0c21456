package archtest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layoutTree is the first fenced block of docs/layout.md: the tree a
// newcomer reads before the code.
func layoutTree(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```\n")
	tree, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("docs/layout.md has no fenced tree")
	}
	return tree
}

// unlisted returns the package folders the tree does not name. A folder
// is named by its whole path ("workers/gpu/") or, in the indented form,
// by its last element on a line of its own ("  gpu/") below its parent.
func unlisted(tree string, dirs []string) []string {
	var missing []string
	for _, d := range dirs {
		if strings.Contains(tree, d+"/") {
			continue
		}
		base := d[strings.LastIndex(d, "/")+1:]
		found := slices.ContainsFunc(strings.Split(tree, "\n"), func(line string) bool {
			return strings.HasPrefix(line, " ") && slices.Contains(strings.Fields(line), base+"/")
		})
		if !found {
			missing = append(missing, d)
		}
	}
	return missing
}

func TestLayoutNamesEveryPackage(t *testing.T) {
	root := repoRoot(t)
	var dirs []string
	for _, f := range parseTree(t, root) {
		if !f.test && f.dir != "." && !slices.Contains(dirs, f.dir) {
			dirs = append(dirs, f.dir)
		}
	}
	for _, d := range unlisted(layoutTree(t, root), dirs) {
		t.Errorf("docs/layout.md does not name %s/: add it to the tree with what it holds", d)
	}
}

func TestUnlistedFindsAMissingFolder(t *testing.T) {
	tree := "queues/   kernel\n  flows/   runs\nworkers/gpu/   devices\n"
	got := unlisted(tree, []string{"queues", "queues/flows", "workers/gpu", "workers/runas"})
	if !slices.Equal(got, []string{"workers/runas"}) {
		t.Fatalf("unlisted = %q, want only workers/runas", got)
	}
}
