package archtest

import (
	"fmt"
	"go/ast"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// allowedConcrete lists where non-test code outside queues and the
// command layer (internal/cli, which builds the store) may still name
// *queues.Store, with why a narrow interface would not do there. An entry
// is a folder (anywhere in that package) or folder.Declaration (inside
// that top-level function, method or type).
var allowedConcrete = []struct{ where, why string }{
	{"orchestrator/web/api.Handler", "it splits the one store into the endpoints' parts (stores.go) " +
		"and builds the concern stores (flows, usage, logs, registry, checkpoints, leader, redisinfo) on the same kernel"},
	{"workers.New", "it splits the one store into the worker's concerns (stores.go) and builds the gangs, " +
		"logs and checkpoints stores on it; the union of what a worker calls is more than one interface should list"},
	{"internal/tools/bench", "a test harness: it builds a store from its own Redis and drives " +
		"controller and workers with it, as the command layer does"},
	{"internal/tools/chaos", "a test harness: it builds the store, starts workers with it and " +
		"reads the store's raw state to judge a fault, as no service should"},
}

// concreteUse is one place that names *queues.Store.
type concreteUse struct {
	at   string // file:line
	dir  string
	decl string // top-level declaration it sits in ("" at file level)
}

// concreteUses finds *queues.Store in the non-test files outside queues
// and internal/cli.
func concreteUses(files []goFile) []concreteUse {
	var uses []concreteUse
	for _, f := range files {
		if f.test || f.dir == "queues" || strings.HasPrefix(f.dir, "queues/") ||
			f.dir == "internal/cli" || strings.HasPrefix(f.dir, "internal/cli/") {
			continue
		}
		q := storeNames(f.ast)
		if len(q) == 0 {
			continue
		}
		for _, d := range f.ast.Decls {
			name := declName(d)
			ast.Inspect(d, func(n ast.Node) bool {
				if e, ok := n.(ast.Expr); ok && isConcreteStore(e, q) {
					uses = append(uses, concreteUse{at: position(f.fset, f.path, e.Pos()), dir: f.dir, decl: name})
				}
				return true
			})
		}
	}
	return uses
}

// declName names a top-level declaration: Func, Type.Method, or the
// first name of a type, var or const group.
func declName(d ast.Decl) string {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil || len(d.Recv.List) == 0 {
			return d.Name.Name
		}
		t := d.Recv.List[0].Type
		if s, ok := t.(*ast.StarExpr); ok {
			t = s.X
		}
		if ix, ok := t.(*ast.IndexExpr); ok {
			t = ix.X
		}
		if id, ok := t.(*ast.Ident); ok {
			return id.Name + "." + d.Name.Name
		}
		return d.Name.Name
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				return s.Name.Name
			case *ast.ValueSpec:
				return s.Names[0].Name
			}
		}
	}
	return ""
}

func position(fset *token.FileSet, path string, p token.Pos) string {
	return fmt.Sprintf("%s:%d", path, fset.Position(p).Line)
}

// checkConcrete returns a problem for each use no entry allows, and for
// each entry that allows nothing (a stale reason is a wrong document).
func checkConcrete(uses []concreteUse, allowed []string) []string {
	var problems []string
	used := map[string]bool{}
	for _, u := range uses {
		switch {
		case slices.Contains(allowed, u.dir):
			used[u.dir] = true
		case u.decl != "" && slices.Contains(allowed, u.dir+"."+u.decl):
			used[u.dir+"."+u.decl] = true
		default:
			problems = append(problems, fmt.Sprintf("%s: *queues.Store in %s; declare an interface of the "+
				"calls it makes (as orchestrator/control/controller/stores.go does), or add it to allowedConcrete "+
				"with the reason an interface would not do", u.at, u.decl))
		}
	}
	for _, a := range allowed {
		if !used[a] {
			problems = append(problems, fmt.Sprintf("allowedConcrete lists %s, which no longer names "+
				"*queues.Store: remove the entry", a))
		}
	}
	return problems
}

func TestConcreteStoreOnlyWhereAllowed(t *testing.T) {
	var allowed []string
	for _, a := range allowedConcrete {
		allowed = append(allowed, a.where)
	}
	for _, p := range checkConcrete(concreteUses(parseTree(t, repoRoot(t))), allowed) {
		t.Error(p)
	}
}

// TestConcreteCheckCatches proves the check fails: a service field of
// the concrete type, seen through an aliased import, is reported, and an
// allow entry nothing needs is reported as stale.
func TestConcreteCheckCatches(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "go.mod", "module "+module+"\n")
	writeFile(t, root, "svc/svc.go", `package svc

import q "`+queuesPath+`"

type Service struct{ store *q.Store }

func Use(s *q.Store) {}
`)
	writeFile(t, root, "queues/store.go", "package queues\n\ntype Store struct{}\n\nfunc Self(s *Store) {}\n")
	uses := concreteUses(parseTree(t, root))
	if len(uses) != 2 || uses[0].decl != "Service" || uses[1].decl != "Use" {
		t.Fatalf("uses = %+v, want Service's field and Use's parameter", uses)
	}
	if got := checkConcrete(uses, []string{"svc.Use", "gone"}); len(got) != 2 ||
		!strings.Contains(got[0], "svc/svc.go:5") || !strings.Contains(got[1], "lists gone") {
		t.Fatalf("problems = %q, want svc.go:5 unallowed and the stale entry", got)
	}
	if got := checkConcrete(uses, []string{"svc"}); len(got) != 0 {
		t.Fatalf("a folder entry allows the whole package; got %q", got)
	}
}
