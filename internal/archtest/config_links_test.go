package archtest

import (
	"slices"
	"strings"
	"testing"
)

// cloudSDKs are the clients that open checkpoint stores: several hundred
// packages between them.
var cloudSDKs = []string{"gocloud.dev/...", "github.com/aws/...", "github.com/Azure/...", "cloud.google.com/..."}

// linksOutside walks the repository's import graph from dir and returns,
// for each outside import that matches patterns, the chain of repository
// folders that leads to it.
func linksOutside(files []goFile, dir string, patterns []string) []string {
	repo, outside := importGraph(files)
	var found []string
	walk(repo, dir, func(at string, chain func() []string) bool {
		for _, im := range outside[at] {
			if matches(im, patterns) {
				found = append(found, strings.Join(append(chain(), im), " -> "))
			}
		}
		return true
	})
	slices.Sort(found)
	return found
}

// TestConfigLinksNoCloudSDK: reading a config never links the cloud SDKs.
// Every command, test and fuzz target that parses one would build them
// (the config's fuzz target took four minutes to build when it did); the
// config reads store URLs through workers/checkpoint/storespec.
func TestConfigLinksNoCloudSDK(t *testing.T) {
	for _, p := range linksOutside(parseTree(t, repoRoot(t)), "internal/config", cloudSDKs) {
		t.Errorf("internal/config links a cloud SDK: %s; read what the config needs through a package that does not", p)
	}
}

// TestLinksOutsideFindsAChain: the walk finds an SDK two folders away and
// names the way there; a test file's import does not count.
func TestLinksOutsideFindsAChain(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a/a.go", "package a\n\nimport _ \""+module+"/b\"\n")
	writeFile(t, root, "a/a_test.go", "package a\n\nimport _ \"github.com/aws/aws-sdk-go-v2/aws\"\n")
	writeFile(t, root, "b/b.go", "package b\n\nimport (\n\t_ \"gocloud.dev/blob\"\n\t_ \"strings\"\n)\n")
	files := parseTree(t, root)
	if got, want := linksOutside(files, "a", cloudSDKs), []string{"a -> b -> gocloud.dev/blob"}; !slices.Equal(got, want) {
		t.Fatalf("linksOutside = %q, want %q", got, want)
	}
	if got := linksOutside(files, "b", []string{"github.com/aws/..."}); len(got) != 0 {
		t.Fatalf("linksOutside found %q where nothing matches", got)
	}
}
