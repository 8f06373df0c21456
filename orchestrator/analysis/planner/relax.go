package planner

import (
	"maps"
	"slices"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// RelaxUnknownLabels drops from tr's requirements every label key that no
// pool declares, and returns the keys it dropped. A public trace names GPU
// models (gpu_model from gpu_spec) that a fleet described without models
// does not tell apart: planning it as if no worker could run those jobs
// would make every plan infeasible, when the config means "every GPU
// alike". Live, the rule stays strict: a job whose labels no worker
// carries waits. A key some pool declares is kept, values and all.
func RelaxUnknownLabels(tr trace.Trace, pools []policy.Pool) (trace.Trace, []string) {
	declared := map[string]bool{}
	for _, p := range pools {
		for k := range p.Labels {
			declared[k] = true
		}
	}
	unknown := map[string]bool{}
	for _, j := range tr.Jobs {
		for k := range j.Requires {
			if !declared[k] {
				unknown[k] = true
			}
		}
	}
	if len(unknown) == 0 {
		return tr, nil
	}
	out := tr
	out.Jobs = slices.Clone(tr.Jobs)
	// Jobs share their Requires maps (readers intern them, and they are
	// read-only), so each distinct set is rebuilt once.
	cache := map[string]map[string]string{}
	for i := range out.Jobs {
		req := out.Jobs[i].Requires
		if len(req) == 0 {
			continue
		}
		key := jobs.LabelsKey(req)
		kept, ok := cache[key]
		if !ok {
			for k, v := range req {
				if declared[k] {
					if kept == nil {
						kept = map[string]string{}
					}
					kept[k] = v
				}
			}
			cache[key] = kept
		}
		out.Jobs[i].Requires = kept
	}
	return out, slices.Sorted(maps.Keys(unknown))
}
