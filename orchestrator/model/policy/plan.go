package policy

import "strings"

// Plan is what Decide wants done this tick. Actions come in rule order
// (reclaims first, because core work is waiting on them) and, within a rule,
// in the rule's own priority order; every ordering ends in an ID, so the same
// snapshot always gives the same list.
type Plan struct {
	Actions []Action
}

// Empty reports whether the plan does nothing.
func (p Plan) Empty() bool { return len(p.Actions) == 0 }

// Count returns how many actions are of kind k.
func (p Plan) Count(k ActionKind) int {
	n := 0
	for _, a := range p.Actions {
		if a.Kind == k {
			n++
		}
	}
	return n
}

// String renders the plan for logs, one action per line.
func (p Plan) String() string {
	if p.Empty() {
		return "plan: nothing to do"
	}
	var b strings.Builder
	b.WriteString("plan:")
	for _, a := range p.Actions {
		b.WriteString("\n  ")
		b.WriteString(a.String())
	}
	return b.String()
}
