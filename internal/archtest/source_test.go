package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// module is the import path the repository's packages start with.
const module = "github.com/ballastdev/ballast"

// queuesPath is the package whose Store the tests watch.
const queuesPath = module + "/queues"

// goFile is one parsed file with where it sits.
type goFile struct {
	dir  string // slash-separated, relative to the root ("orchestrator/web/api")
	path string // relative to the root, for messages
	test bool
	ast  *ast.File
	fset *token.FileSet
}

// repoRoot is the module root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod two levels above internal/archtest: %v", err)
	}
	return root
}

// parseTree parses every Go file under root, skipping hidden folders,
// testdata and vendor, as the go command does.
func parseTree(t *testing.T, root string) []goFile {
	t.Helper()
	fset := token.NewFileSet()
	var files []goFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		files = append(files, goFile{dir: pathDir(rel), path: rel, test: strings.HasSuffix(name, "_test.go"), ast: f, fset: fset})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func pathDir(rel string) string {
	if i := strings.LastIndex(rel, "/"); i >= 0 {
		return rel[:i]
	}
	return "."
}

// importName is the name f refers to the package path by ("" when f
// does not import it).
func importName(f *ast.File, path string) string {
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil || p != path {
			continue
		}
		if im.Name != nil {
			return im.Name.Name
		}
		return path[strings.LastIndex(path, "/")+1:]
	}
	return ""
}

// importDirs maps the names f gives to the repository's packages to
// their folders.
func importDirs(f *ast.File) map[string]string {
	dirs := map[string]string{}
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil || !strings.HasPrefix(p, module+"/") {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		dirs[name] = strings.TrimPrefix(p, module+"/")
	}
	return dirs
}

// isConcreteStore says whether e is *queues.Store, with queues the name
// the file gives the package.
func isConcreteStore(e ast.Expr, stores map[string]bool) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Store" {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && stores[id.Name]
}

// storeNames maps the names f gives to the store packages: queues (the
// kernel with jobs and deliveries) and the stores of one concern under it
// (queues/gangs, queues/flows, ...). Each has a Store the tests watch.
func storeNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil || (p != queuesPath && !strings.HasPrefix(p, queuesPath+"/")) {
			continue
		}
		if n := importName(f, p); n != "" {
			names[n] = true
		}
	}
	return names
}

// inStores reports whether dir is one of the store packages, which may
// use their own concrete types.
func inStores(dir string) bool { return dir == "queues" || strings.HasPrefix(dir, "queues/") }
