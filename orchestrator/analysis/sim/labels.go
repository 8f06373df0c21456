package sim

import "github.com/ballastdev/ballast/orchestrator/model/jobs"

// carries reports whether labels meet every requirement in req, a
// requirement naming one value or several (jobs.AnyOf): the rule the
// policy places by, a worker carrying its pool's labels.
func carries(labels, req map[string]string) bool { return jobs.Carries(labels, req) }
