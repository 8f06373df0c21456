package config

import (
	"fmt"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// problems collects field errors while validating, so that every problem is
// reported in one round.
type problems struct{ list []*jobs.FieldError }

func (p *problems) add(field, format string, args ...any) {
	p.list = append(p.list, &jobs.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// merge adds the problems of a nested validation (the template catalog).
func (p *problems) merge(err error) {
	if err == nil {
		return
	}
	if ve, ok := err.(*jobs.ValidationError); ok {
		p.list = append(p.list, ve.Problems...)
		return
	}
	p.list = append(p.list, &jobs.FieldError{Field: "", Message: err.Error(), Err: err})
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &jobs.ValidationError{Problems: p.list}
}
