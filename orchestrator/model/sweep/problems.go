package sweep

import "github.com/ballastdev/ballast/orchestrator/model/jobs"

// maxProblems bounds the problems reported for one spec: a bad template field
// would otherwise be reported once per trial.
const maxProblems = 50

// problems collects distinct field errors; err returns nil when there are none.
type problems struct {
	list    []*jobs.FieldError
	seen    map[string]bool
	dropped int
}

func (p *problems) add(field, msg string) {
	p.addFE(&jobs.FieldError{Field: field, Message: msg})
}

func (p *problems) addFE(fe *jobs.FieldError) {
	key := fe.Field + "\x00" + fe.Message
	if p.seen[key] {
		return
	}
	if p.seen == nil {
		p.seen = make(map[string]bool)
	}
	p.seen[key] = true
	if len(p.list) >= maxProblems {
		p.dropped++
		return
	}
	p.list = append(p.list, fe)
}

func (p *problems) empty() bool { return len(p.list) == 0 }

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	list := p.list
	if p.dropped > 0 {
		list = append(list[:len(list):len(list)], &jobs.FieldError{Field: "body", Message: "further problems omitted; fix these first"})
	}
	return &jobs.ValidationError{Problems: list}
}
