package archtest

import (
	"fmt"
	"go/ast"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxStoreMethods is the most methods an interface over the job store
// may list (issue 34): past it, an interface is a store in disguise.
const maxStoreMethods = 15

// storeConsumers are the packages that must hold the store through
// interfaces checked against it; a check that vanished from one of them
// would silently take its interfaces out of this test.
var storeConsumers = []string{
	"orchestrator/web/api",
	"orchestrator/control/controller",
	"orchestrator/web/insight",
	"orchestrator/control/intake",
	"orchestrator/control/telemetry",
	"workers",
	"workers/checkpoint/checkpointtest",
}

// storeCheck is one `var _ I = (*queues.Store)(nil)`.
type storeCheck struct {
	at        string
	dir, name string // where I is declared and its name
}

// storeChecks finds the compile-time checks against *queues.Store in
// every file outside queues, tests included (that is where they live).
func storeChecks(files []goFile) []storeCheck {
	var checks []storeCheck
	for _, f := range files {
		if inStores(f.dir) {
			continue
		}
		q := storeNames(f.ast)
		if len(q) == 0 {
			continue
		}
		for _, d := range f.ast.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				v, ok := s.(*ast.ValueSpec)
				if !ok || v.Type == nil {
					continue
				}
				for _, val := range v.Values {
					call, ok := val.(*ast.CallExpr)
					if !ok {
						continue
					}
					paren, ok := call.Fun.(*ast.ParenExpr)
					if !ok || !isConcreteStore(paren.X, q) {
						continue
					}
					c := storeCheck{at: position(f.fset, f.path, val.Pos()), dir: f.dir}
					switch ty := v.Type.(type) {
					case *ast.Ident:
						c.name = ty.Name
					case *ast.SelectorExpr:
						c.name = ty.Sel.Name
						if x, ok := ty.X.(*ast.Ident); ok {
							c.dir = importDirs(f.ast)[x.Name]
						}
					}
					checks = append(checks, c)
				}
			}
		}
	}
	return checks
}

// ifaceDecl is an interface type declared in non-test code.
type ifaceDecl struct {
	iface *ast.InterfaceType
	file  goFile
}

func interfaces(files []goFile) map[string]ifaceDecl {
	out := map[string]ifaceDecl{}
	for _, f := range files {
		if f.test {
			continue
		}
		for _, d := range f.ast.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range g.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					if it, ok := ts.Type.(*ast.InterfaceType); ok {
						out[f.dir+"."+ts.Name.Name] = ifaceDecl{iface: it, file: f}
					}
				}
			}
		}
	}
	return out
}

// methodSet collects the methods of dir.name with those of the
// interfaces it embeds, here or in another of the repository's packages.
// Methods embedded twice (allowed since Go 1.14) count once.
func methodSet(decls map[string]ifaceDecl, dir, name string, into map[string]bool) error {
	d, ok := decls[dir+"."+name]
	if !ok {
		return fmt.Errorf("interface %s.%s not found in non-test code", dir, name)
	}
	for _, m := range d.iface.Methods.List {
		for _, n := range m.Names {
			into[n.Name] = true
		}
		if len(m.Names) > 0 {
			continue
		}
		var err error
		switch e := m.Type.(type) {
		case *ast.Ident:
			err = methodSet(decls, dir, e.Name, into)
		case *ast.SelectorExpr:
			x, _ := e.X.(*ast.Ident)
			if x == nil || importDirs(d.file.ast)[x.Name] == "" {
				return fmt.Errorf("%s.%s embeds %s from outside the repository", dir, name, e.Sel.Name)
			}
			err = methodSet(decls, importDirs(d.file.ast)[x.Name], e.Sel.Name, into)
		default:
			return fmt.Errorf("%s.%s embeds a type this test cannot read", dir, name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkStoreInterfaces returns a problem for each checked interface over
// the limit or unreadable, and for each consumer with no check at all.
func checkStoreInterfaces(files []goFile, consumers []string) (problems []string, counts map[string]int) {
	decls := interfaces(files)
	counts = map[string]int{}
	checked := map[string]bool{}
	for _, c := range storeChecks(files) {
		checked[c.dir] = true
		ms := map[string]bool{}
		if err := methodSet(decls, c.dir, c.name, ms); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", c.at, err))
			continue
		}
		counts[c.dir+"."+c.name] = len(ms)
		if len(ms) > maxStoreMethods {
			problems = append(problems, fmt.Sprintf("%s: %s.%s lists %d store methods, more than %d: split it by concern",
				c.at, c.dir, c.name, len(ms), maxStoreMethods))
		}
	}
	for _, dir := range consumers {
		if !checked[dir] {
			problems = append(problems, fmt.Sprintf("%s has no `var _ I = (*queues.Store)(nil)` check: add one per "+
				"store interface it declares", dir))
		}
	}
	return problems, counts
}

func TestStoreInterfacesAreNarrow(t *testing.T) {
	problems, counts := checkStoreInterfaces(parseTree(t, repoRoot(t)), storeConsumers)
	for _, p := range problems {
		t.Error(p)
	}
	for _, n := range slices.Sorted(maps.Keys(counts)) {
		t.Logf("%-60s %2d methods", n, counts[n])
	}
}

// TestStoreInterfaceCheckCatches proves the check fails: an interface of
// 16 methods, reached through an embedding in another package with a
// method listed twice, is reported, and so is a consumer with no check.
func TestStoreInterfaceCheckCatches(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "go.mod", "module "+module+"\n")
	var base, more strings.Builder
	for i := range 10 {
		fmt.Fprintf(&base, "\tM%d()\n", i)
	}
	for i := 9; i < 16; i++ { // M9 again: 16 distinct in all
		fmt.Fprintf(&more, "\tM%d()\n", i)
	}
	writeFile(t, root, "a/a.go", "package a\n\ntype Base interface {\n"+base.String()+"}\n")
	writeFile(t, root, "b/b.go", "package b\n\nimport \""+module+"/a\"\n\ntype Wide interface {\n\ta.Base\n"+
		more.String()+"}\n\ntype Narrow interface{ a.Base }\n")
	writeFile(t, root, "b/b_test.go", "package b\n\nimport \""+queuesPath+"\"\n\nvar (\n\t_ Wide = (*queues.Store)(nil)\n"+
		"\t_ Narrow = (*queues.Store)(nil)\n)\n")
	problems, counts := checkStoreInterfaces(parseTree(t, root), []string{"b", "c"})
	if counts["b.Wide"] != 16 || counts["b.Narrow"] != 10 {
		t.Fatalf("counts = %v, want b.Wide 16 and b.Narrow 10", counts)
	}
	if len(problems) != 2 || !strings.Contains(problems[0], "b.Wide lists 16") || !strings.Contains(problems[1], "c has no") {
		t.Fatalf("problems = %q, want b.Wide over the limit and c unchecked", problems)
	}
}

func writeFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
