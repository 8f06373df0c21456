package archtest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A layer is a folder of packages and what its non-test code may import.
// The layout (docs/layout.md) is only worth its folders if these hold: a
// model that opened a Redis connection, or a simulator that read the
// config loader, would make the folder names lie.
type layer struct {
	name string
	// prefixes are the folders of the layer, relative to the root.
	prefixes []string
	// may lists the repository folders its packages may import (by
	// prefix); a layer always may import itself.
	may []string
	// mustNot lists the import patterns outside the repository (see
	// networkIO) that mean I/O the layer must not do.
	mustNot []string
}

// internalLibs are the repository's small libraries, usable by any layer.
var internalLibs = []string{"internal/jsonenc", "internal/spread", "internal/timespan", "internal/textdist", "internal/retry"}

// networkIO is what a pure layer must never import, in the go command's
// pattern syntax: "net/http/..." is net/http and every package below it,
// and "net" is that package alone, so parsing a URL (net/url) stays
// allowed while dialling does not.
var networkIO = []string{"github.com/redis/...", "github.com/nats-io/...", "github.com/hibiken/asynq/...",
	"net", "net/http/...", "net/rpc/...", "net/smtp", "os/exec", "syscall"}

var layers = []layer{
	{name: "pure models", prefixes: []string{"orchestrator/model"},
		may: internalLibs, mustNot: networkIO},
	{name: "analysis", prefixes: []string{"orchestrator/analysis"},
		may: append([]string{"orchestrator/model"}, internalLibs...), mustNot: networkIO},
	// The Redis layer knows jobs, not who drives them.
	{name: "Redis layer", prefixes: []string{"queues"},
		may: append([]string{"orchestrator/model"}, internalLibs...)},
	// The control plane serves the web, never the other way round, and
	// never reaches into a worker.
	{name: "control plane", prefixes: []string{"orchestrator/control"},
		may: append([]string{"orchestrator/model", "queues"}, internalLibs...)},
	// A worker talks to the store and publishes events; the controller is
	// another process it never calls into.
	{name: "workers", prefixes: []string{"workers"},
		may: append([]string{"orchestrator/model", "queues"}, internalLibs...)},
	{name: "web", prefixes: []string{"orchestrator/web"},
		may: append([]string{"orchestrator/model", "orchestrator/analysis", "orchestrator/control", "queues",
			"workers/checkpoint"}, internalLibs...)},
	// The client speaks the intake's wire types and nothing else of the
	// control plane.
	{name: "client", prefixes: []string{"orchestrator/client"},
		may: append([]string{"orchestrator/model", "orchestrator/control/intake"}, internalLibs...)},
}

// commandLayer is where the command line, its configuration loader and the
// developer tools live; no library or service may depend on it, even
// through another package.
var commandLayer = []string{"internal/cli", "internal/config", "internal/tools"}

// services are the packages a running installation is built from.
var services = []string{"orchestrator/control", "orchestrator/web", "orchestrator/client", "queues", "workers"}

// matches says whether an import path is one of patterns, read as the go
// command reads package patterns: a trailing "/..." takes the package and
// everything below it; any other pattern is one package.
func matches(im string, patterns []string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		if base, ok := strings.CutSuffix(p, "/..."); ok {
			return im == base || strings.HasPrefix(im, base+"/")
		}
		return im == p
	})
}

func hasPrefixDir(dir string, prefixes []string) bool {
	return slices.ContainsFunc(prefixes, func(p string) bool { return dir == p || strings.HasPrefix(dir, p+"/") })
}

// importGraph maps each folder to the imports of its non-test files:
// repository folders (relative) and outside paths (whole).
func importGraph(files []goFile) (repo map[string][]string, outside map[string][]string) {
	repo, outside = map[string][]string{}, map[string][]string{}
	for _, f := range files {
		if f.test {
			continue
		}
		for _, im := range f.ast.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				continue
			}
			if rel, ok := strings.CutPrefix(p, module+"/"); ok {
				if !slices.Contains(repo[f.dir], rel) {
					repo[f.dir] = append(repo[f.dir], rel)
				}
			} else if !slices.Contains(outside[f.dir], p) {
				outside[f.dir] = append(outside[f.dir], p)
			}
		}
	}
	return repo, outside
}

func checkLayers(files []goFile, layers []layer, services, command []string) []string {
	repo, outside := importGraph(files)
	var problems []string
	dirs := map[string]bool{}
	for d := range repo {
		dirs[d] = true
	}
	for d := range outside {
		dirs[d] = true
	}
	for _, dir := range slices.Sorted(maps.Keys(dirs)) {
		for _, l := range layers {
			if !hasPrefixDir(dir, l.prefixes) {
				continue
			}
			for _, im := range repo[dir] {
				if !hasPrefixDir(im, l.prefixes) && !hasPrefixDir(im, l.may) {
					problems = append(problems, fmt.Sprintf("%s (%s) imports %s: the layer may import only %s and itself",
						dir, l.name, im, strings.Join(l.may, ", ")))
				}
			}
			for _, im := range outside[dir] {
				if matches(im, l.mustNot) {
					problems = append(problems, fmt.Sprintf("%s (%s) imports %s: it must do no I/O of that kind; "+
						"move the I/O to a service and pass values in", dir, l.name, im))
				}
			}
		}
		if !hasPrefixDir(dir, services) {
			continue
		}
		// Walk the service's imports, transitively, for the command layer.
		walk(repo, dir, func(at string, chain func() []string) bool {
			if !hasPrefixDir(at, command) {
				return true
			}
			problems = append(problems, fmt.Sprintf("service %s depends on the command layer: %s",
				dir, strings.Join(chain(), " -> ")))
			return false
		})
	}
	return problems
}

// walk visits the repository folders dir reaches through the import
// graph repo, dir first, breadth first and each once. visit gets the
// folder and, for a report, the chain of folders from dir to it; it says
// whether to go on through the folder's imports.
func walk(repo map[string][]string, dir string, visit func(at string, chain func() []string) bool) {
	from := map[string]string{dir: ""}
	queue := []string{dir}
	for len(queue) > 0 {
		at := queue[0]
		queue = queue[1:]
		chain := func() []string {
			var c []string
			for p := at; p != ""; p = from[p] {
				c = append(c, p)
			}
			slices.Reverse(c)
			return c
		}
		if !visit(at, chain) {
			continue
		}
		for _, im := range repo[at] {
			if _, ok := from[im]; !ok {
				from[im] = at
				queue = append(queue, im)
			}
		}
	}
}

func TestLayersImportOnlyWhatTheyMay(t *testing.T) {
	for _, p := range checkLayers(parseTree(t, repoRoot(t)), layers, services, commandLayer) {
		t.Error(p)
	}
}

func TestLayerCheckCatches(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "orchestrator/model/m/m.go", "package m\n\nimport (\n\t_ \"github.com/redis/go-redis/v9\"\n\t_ \""+
		module+"/queues\"\n)\n")
	writeFile(t, root, "orchestrator/model/ok/ok.go", "package ok\n\nimport (\n\t_ \""+module+"/internal/jsonenc\"\n\t_ \"net/url\"\n)\n")
	writeFile(t, root, "orchestrator/model/n/n.go", "package n\n\nimport _ \"net\"\n")
	writeFile(t, root, "orchestrator/control/c/c.go", "package c\n\nimport _ \""+module+"/orchestrator/web/api\"\n")
	writeFile(t, root, "workers/w.go", "package workers\n\nimport _ \""+module+"/lib\"\n")
	writeFile(t, root, "lib/lib.go", "package lib\n\nimport _ \""+module+"/internal/config\"\n")
	writeFile(t, root, "workers/w_test.go", "package workers\n\nimport _ \""+module+"/internal/cli\"\n")
	got := checkLayers(parseTree(t, root), layers, services, commandLayer)
	want := []string{"orchestrator/model/m (pure models) imports queues", "orchestrator/model/m (pure models) imports github.com/redis/go-redis/v9",
		"service workers depends on the command layer: workers -> lib -> internal/config",
		"workers (workers) imports lib", "orchestrator/model/n (pure models) imports net:",
		"orchestrator/control/c (control plane) imports orchestrator/web/api"}
	if len(got) != len(want) {
		t.Fatalf("problems = %q, want %d: %q", got, len(want), want)
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w) }) {
			t.Errorf("no problem starts with %q in %q", w, got)
		}
	}
}
