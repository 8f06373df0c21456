package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
	"testing"
)

// eventsDir is the package that alone spells the keys of events.Event's
// Data: every other package builds and reads Data through its types
// (events.JobStart, events.ParseJobEnd and the like), so that a producer
// and its consumers cannot drift apart on a key.
const eventsDir = "orchestrator/model/events"

// eventDataAllowed lists the non-test files outside orchestrator/model/events
// that may still spell a Data key, each with why. Empty: every kind is
// typed. An entry that no longer spells a key fails the test, so the list
// only shrinks.
var eventDataAllowed = map[string]string{}

// TestOnlyEventsSpellsDataKeys fails when a non-test file outside
// orchestrator/model/events indexes a Data field with a string literal or an
// events constant (e.Data["pool"], e.Data[events.DataSpec]), builds a
// Data field from a map literal (Data: map[string]any{...}), or builds a
// map literal keyed by an events constant.
func TestOnlyEventsSpellsDataKeys(t *testing.T) {
	root := repoRoot(t)
	found := map[string][]string{}
	for _, f := range parseTree(t, root) {
		if f.test || f.dir == eventsDir {
			continue
		}
		found[f.path] = append(found[f.path], dataKeySpellings(f.ast, f.fset, importName(f.ast, module+"/"+eventsDir))...)
	}
	var bad []string
	for path, wheres := range found {
		if _, ok := eventDataAllowed[path]; !ok {
			bad = append(bad, wheres...)
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("event Data keys spelled outside %s (add or use a type there):\n%s", eventsDir, strings.Join(bad, "\n"))
	}
	for path := range eventDataAllowed {
		if len(found[path]) == 0 {
			t.Errorf("%s is allowed to spell event Data keys but no longer does: remove it from eventDataAllowed", path)
		}
	}
}

// TestDataKeySpellingsFindsEachForm keeps the finder honest: each form it
// must catch is caught, and the typed forms are not.
func TestDataKeySpellingsFindsEachForm(t *testing.T) {
	src := `package p

import ev "github.com/ballastdev/ballast/orchestrator/model/events"

func f(e ev.Event, m map[string]any) {
	_ = e.Data["pool"]
	_ = e.Data[ev.DataSpec]
	_ = ev.Event{Data: map[string]any{"class": "core"}}
	_ = map[string]any{ev.DataUnrecorded: "gone"}
	_ = ev.Event{Data: ev.JobEnd{Class: "core"}.Data()}
	_ = m["pool"]
	_ = ev.JobClass(e)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := dataKeySpellings(f, fset, importName(f, module+"/"+eventsDir))
	want := []string{"p.go:6", "p.go:7", "p.go:8", "p.go:9"}
	var lines []string
	for _, g := range got {
		lines = append(lines, g[:strings.Index(g, " ")])
	}
	if strings.Join(lines, ",") != strings.Join(want, ",") {
		t.Fatalf("found %q; want spellings at %v", got, want)
	}
}

// dataKeySpellings lists, as "file:line what", where f spells an event
// Data key; events is the name f gives the events package ("" if none).
func dataKeySpellings(f *ast.File, fset *token.FileSet, events string) []string {
	var out []string
	report := func(n ast.Node, what string) {
		p := fset.Position(n.Pos())
		out = append(out, fmt.Sprintf("%s:%d %s", p.Filename, p.Line, what))
	}
	isEventsConst := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok || events == "" {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		return ok && id.Name == events
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IndexExpr:
			sel, ok := n.X.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Data" {
				return true
			}
			if lit, ok := n.Index.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				report(n, "indexes Data with "+lit.Value)
			} else if isEventsConst(n.Index) {
				report(n, "indexes Data with an events constant")
			}
		case *ast.KeyValueExpr:
			key, ok := n.Key.(*ast.Ident)
			if !ok || key.Name != "Data" {
				return true
			}
			if lit, ok := n.Value.(*ast.CompositeLit); ok {
				if _, isMap := lit.Type.(*ast.MapType); isMap {
					report(n, "builds Data from a map literal")
					return false
				}
			}
		case *ast.CompositeLit:
			if _, isMap := n.Type.(*ast.MapType); !isMap {
				return true
			}
			for _, el := range n.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok && isEventsConst(kv.Key) {
					report(n, "builds a map keyed by an events constant")
					break
				}
			}
		}
		return true
	})
	return out
}
