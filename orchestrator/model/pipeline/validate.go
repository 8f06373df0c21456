package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// MaxSteps bounds the steps of one pipeline.
const MaxSteps = 256

// nameRE matches pipeline and step names; they appear in dedupe keys, job
// labels and config paths, so they stay plain.
var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// Validate checks the pipeline declared as pipelines.NAME against the
// catalog and returns a *jobs.ValidationError naming every problem by its
// config path, e.g. "pipelines.nightly.steps.train.depends_on". Step
// parameters go through the catalog now, as a submission would, so a bad
// parameter fails validate-config instead of the first run at 02:30.
// A nil catalog has no templates.
func Validate(name string, p Pipeline, cat *jobs.Catalog) error {
	if cat == nil {
		cat, _ = jobs.NewCatalog(nil)
	}
	var ps []*jobs.FieldError
	add := func(field, msg string, sentinel error) {
		ps = append(ps, &jobs.FieldError{Field: field, Message: msg, Err: sentinel})
	}
	base := "pipelines." + name
	if !nameRE.MatchString(name) {
		add(base, "a pipeline name uses lower-case letters, digits, '_' or '-' (at most 63)", nil)
	}

	tz := p.TimeZone
	if _, err := LoadZone(tz); err != nil {
		add(base+".time_zone", err.Error(), nil)
		tz = "" // still check the spec itself
	}
	if _, err := Parse(p.Schedule, tz); err != nil {
		add(base+".schedule", err.Error(), nil)
	}
	if p.Deadline != "" {
		if _, err := parseDeadline(p.Deadline); err != nil {
			add(base+".deadline", err.Error(), nil)
		}
	}
	switch p.Overlap {
	case "", OverlapForbid, OverlapAllow, OverlapReplace:
	default:
		add(base+".overlap", fmt.Sprintf("unknown policy %q (use forbid, allow or replace)", p.Overlap), nil)
	}
	switch p.CatchUp {
	case "", CatchUpSkip, CatchUpLatest:
	default:
		add(base+".catch_up", fmt.Sprintf("unknown policy %q (use skip or latest)", p.CatchUp), nil)
	}

	switch {
	case len(p.Steps) == 0:
		add(base+".steps", "a pipeline needs at least one step: give steps as a map of step name to {template, params}", nil)
	case len(p.Steps) > MaxSteps:
		add(base+".steps", fmt.Sprintf("%d steps; the limit is %d", len(p.Steps), MaxSteps), nil)
	}
	names := slices.Sorted(maps.Keys(p.Steps))
	depsOK := true
	for _, sn := range names {
		st := p.Steps[sn]
		sf := base + ".steps." + sn
		if !nameRE.MatchString(sn) {
			add(sf, "a step name uses lower-case letters, digits, '_' or '-' (at most 63)", nil)
		}
		seen := map[string]bool{}
		for _, d := range st.DependsOn {
			switch _, ok := p.Steps[d]; {
			case d == sn:
				add(sf+".depends_on", fmt.Sprintf("step %q depends on itself; remove it from its own depends_on", sn), nil)
				depsOK = false
			case !ok:
				add(sf+".depends_on", fmt.Sprintf("unknown step %q (steps: %s)", d, strings.Join(names, ", ")), nil)
				depsOK = false
			case seen[d]:
				add(sf+".depends_on", fmt.Sprintf("step %q is listed twice", d), nil)
			}
			seen[d] = true
		}
		for _, fe := range checkStep(st, cat) {
			fe.Field = sf + "." + fe.Field
			ps = append(ps, fe)
		}
	}
	if depsOK {
		if _, err := Order(p); err != nil {
			var ce *CycleError
			if errors.As(err, &ce) {
				add(base+".steps."+ce.Path[0]+".depends_on", err.Error(), nil)
			} else {
				add(base+".steps", err.Error(), nil)
			}
		}
	}
	if len(ps) == 0 {
		return nil
	}
	return &jobs.ValidationError{Problems: ps}
}

// checkStep resolves the step as the submission it will become and returns
// the catalog's problems with fields relative to the step.
func checkStep(st Step, cat *jobs.Catalog) []*jobs.FieldError {
	if st.Template == "" {
		return []*jobs.FieldError{{Field: "template", Message: "missing: name one of the configured templates"}}
	}
	sub, out := submission(st)
	if st.CoreMaxWait != nil && *st.CoreMaxWait < 0 {
		out = append(out, &jobs.FieldError{Field: "core_max_wait",
			Message: fmt.Sprintf("is %s; write 0 to overflow at once, or a positive wait such as 15m", *st.CoreMaxWait)})
	}
	if _, err := cat.Resolve(sub); err != nil {
		var ve *jobs.ValidationError
		if !errors.As(err, &ve) {
			return append(out, &jobs.FieldError{Field: "template", Message: err.Error()})
		}
		for _, fe := range ve.Problems {
			c := *fe
			out = append(out, &c)
		}
	}
	return out
}

// StepSpec resolves step name of a run of pipelineName into the job to
// submit: placed by StepClass, rhythm periodic, labelled with the pipeline,
// run and step (LabelPipeline, LabelRun, LabelStep), and with an idempotency
// key per run and step, so submitting it again after a crash returns the
// same job. Errors are *jobs.ValidationError, as from the catalog.
func StepSpec(cat *jobs.Catalog, pipelineName, runID, name string, st Step) (jobs.Spec, error) {
	sub, problems := submission(st)
	if len(problems) > 0 {
		return jobs.Spec{}, &jobs.ValidationError{Problems: problems}
	}
	sub.IdempotencyKey = "run:" + runID + ":" + name
	spec, err := cat.Resolve(sub)
	if err != nil {
		return jobs.Spec{}, err
	}
	spec.Rhythm = jobs.RhythmPeriodic
	if st.CoreMaxWait != nil {
		spec.CoreMaxWait = st.CoreMaxWait
	}
	labels := make(map[string]string, len(spec.Labels)+3)
	for k, v := range spec.Labels {
		labels[k] = v
	}
	labels[LabelPipeline], labels[LabelRun], labels[LabelStep] = pipelineName, runID, name
	spec.Labels = labels
	return spec, nil
}

// Labels set on the jobs of pipeline steps.
const (
	LabelPipeline = "ballast.pipeline"
	LabelRun      = "ballast.run"
	LabelStep     = "ballast.step"
)

// submission turns a step into the submission it becomes, placed by
// StepClass, so validate-config checks exactly what a run submits;
// parameters that cannot be encoded are reported by field relative to the
// step.
func submission(st Step) (jobs.Submission, []*jobs.FieldError) {
	sub := jobs.Submission{Template: st.Template, Class: string(StepClass(st))}
	var out []*jobs.FieldError
	if len(st.Params) > 0 {
		sub.Params = make(map[string]json.RawMessage, len(st.Params))
		for _, k := range slices.Sorted(maps.Keys(st.Params)) {
			raw, err := json.Marshal(st.Params[k])
			if err != nil {
				out = append(out, &jobs.FieldError{Field: "params." + k, Message: "cannot be passed to a job: " + err.Error()})
				continue
			}
			sub.Params[k] = raw
		}
	}
	return sub, out
}
