package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Trial is one point of the search space: one job of the sweep.
type Trial struct {
	// Index numbers the trials from 0 in expansion order.
	Index int `json:"index"`
	// Params are the trial's parameters: the spec's fixed ones plus the
	// trial's own, as sent (defaults are applied in Spec).
	Params map[string]json.RawMessage `json:"params"`
	// Spec is the resolved job spec to store and enqueue: class burst,
	// rhythm sweep, the metric to record; no idempotency key (the
	// controller derives one per trial from the sweep ID when it enqueues).
	Spec jobs.Spec `json:"-"`
}

// Expand validates spec against the catalog and returns its trials in order.
// Every trial is checked by cat.Resolve, so a sweep that expands runs only
// valid jobs. The error is a *jobs.ValidationError whose fields name the
// spec's own paths: "space.grid.lr", "space.grid.lr[2]",
// "space.random.count", "space.random.params.lr.min", "space.list[3].epochs",
// "fixed.epochs", "max_parallel", "template".
//
// A template of class core is refused: sweeps run as burst work, and core
// means the operator wants the job on fixed quota only. Nothing is expanded
// when the space is over MaxTrials: the size is computed first.
func Expand(spec Spec, cat *jobs.Catalog) ([]Trial, error) {
	var ps problems
	spec.checkEnvelope(&ps)
	size := spec.Space.check(&ps)

	// A probe without parameters lets Resolve word the template error
	// (missing, unknown, the known names) and check team and labels exactly
	// as for a single job, before any trial is built. Its parameter problems
	// (required ones missing) are not the sweep's: checkParams covers them.
	_, probeErr := cat.Resolve(jobs.Submission{Template: spec.Template, Team: spec.Team, Labels: spec.Labels})
	mergeResolveError(&ps, probeErr, nil)
	t, known := cat.Template(spec.Template)
	if !known {
		return nil, ps.err()
	}
	if t.Class == jobs.ClassCore {
		ps.add("template", fmt.Sprintf("template %q is class core (fixed quota only); sweep trials run as burst work: name a template of class burst (or rhythm sweep)", spec.Template))
	}
	spec.checkParams(t, &ps)
	if !ps.empty() || size == 0 {
		return nil, ps.err()
	}

	points := spec.Space.points()
	trials := make([]Trial, len(points))
	for i, own := range points {
		params := make(map[string]json.RawMessage, len(spec.Fixed)+len(own))
		for k, v := range spec.Fixed {
			params[k] = v
		}
		for k, v := range own {
			params[k] = v
		}
		sub := jobs.Submission{
			Template: spec.Template,
			Params:   params,
			Team:     spec.Team,
			Labels:   spec.Labels,
			Class:    string(jobs.ClassBurst),
		}
		js, err := cat.Resolve(sub)
		if err != nil {
			mergeResolveError(&ps, err, func(name string) string { return spec.Space.source(i, name, own) })
			continue
		}
		js.Rhythm = jobs.RhythmSweep
		js.Metric = spec.WithDefaults().Metric
		trials[i] = Trial{Index: i, Params: params, Spec: js}
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	return trials, nil
}

// mergeResolveError re-homes the problems of a Resolve error: "params.X"
// becomes the path X came from in the sweep spec (dropped when source is
// nil); other fields (template, team, labels.K) are the same in both.
func mergeResolveError(ps *problems, err error, source func(name string) string) {
	if err == nil {
		return
	}
	var ve *jobs.ValidationError
	if !errors.As(err, &ve) {
		ps.add("body", err.Error())
		return
	}
	for _, fe := range ve.Problems {
		field := fe.Field
		switch {
		case source == nil && (field == "params" || strings.HasPrefix(field, "params.")):
			continue
		case field == "params":
			field = "fixed"
		case strings.HasPrefix(field, "params."):
			name := strings.TrimPrefix(field, "params.")
			field = source(name) + "." + name
		}
		ps.addFE(&jobs.FieldError{Field: field, Message: fe.Message, Err: fe.Err})
	}
}

// source names where parameter name of trial i came from, without the name.
func (sp Space) source(i int, name string, own map[string]json.RawMessage) string {
	if _, ok := own[name]; !ok {
		return "fixed"
	}
	switch {
	case sp.Grid != nil:
		return "space.grid"
	case sp.Random != nil:
		return "space.random.params"
	}
	return fmt.Sprintf("space.list[%d]", i)
}

// checkEnvelope validates the fields that do not depend on the template.
func (s Spec) checkEnvelope(ps *problems) {
	if s.MaxParallel < 0 || s.MaxParallel > MaxTrials {
		ps.add("max_parallel", fmt.Sprintf("must be between 0 (no limit) and %d, got %d", MaxTrials, s.MaxParallel))
	}
	switch {
	case len(s.Metric) > MaxMetricKeyBytes:
		ps.add("metric", fmt.Sprintf("is %d bytes; the limit is %d", len(s.Metric), MaxMetricKeyBytes))
	case jobs.CheckText(s.Metric, jobs.NoControls) != "":
		ps.add("metric", jobs.CheckText(s.Metric, jobs.NoControls))
	}
	if msg := jobs.CheckText(s.Template, jobs.NoControls); msg != "" {
		ps.add("template", msg)
	}
	switch s.Goal {
	case "", Minimize, Maximize:
	default:
		ps.add("goal", fmt.Sprintf("unknown goal %q (use minimize or maximize)", s.Goal))
	}
	if s.EarlyStop != nil {
		if s.EarlyStop.MinTrials < 1 || s.EarlyStop.MinTrials > MaxTrials {
			ps.add("early_stop.min_trials", fmt.Sprintf("must be between 1 and %d, got %d (how many other trials must have reached a step before the median counts)", MaxTrials, s.EarlyStop.MinTrials))
		}
		if s.EarlyStop.AfterStep < 0 {
			ps.add("early_stop.after_step", fmt.Sprintf("must be 0 or more, got %d", s.EarlyStop.AfterStep))
		}
	}
	if limit := jobs.MaxIdempotencyBytes; len(s.IdempotencyKey) > limit {
		ps.add("idempotency_key", fmt.Sprintf("is %d bytes; the limit is %d", len(s.IdempotencyKey), limit))
	}
	if msg := jobs.KeyProblem(s.IdempotencyKey); msg != "" {
		ps.add("idempotency_key", msg)
	}
}

// check validates the shape of the space and returns its number of trials,
// 0 when the shape is wrong. It never expands the space.
func (sp Space) check(ps *problems) int {
	kinds := 0
	if sp.Grid != nil {
		kinds++
	}
	if sp.Random != nil {
		kinds++
	}
	if sp.List != nil {
		kinds++
	}
	switch {
	case kinds == 0:
		ps.add("space", "empty: give exactly one of grid, random or list")
		return 0
	case kinds > 1:
		ps.add("space", "give exactly one of grid, random or list, not several")
		return 0
	}
	switch {
	case sp.Grid != nil:
		if len(sp.Grid) == 0 {
			ps.add("space.grid", `empty: give each parameter's values, e.g. {"lr": [0.1, 0.01]}`)
			return 0
		}
		size, factors := 1, make([]string, 0, len(sp.Grid))
		for _, name := range slices.Sorted(maps.Keys(sp.Grid)) {
			n := len(sp.Grid[name])
			if n == 0 {
				ps.add("space.grid."+name, "no values: give at least one, or drop the parameter")
				return 0
			}
			factors = append(factors, strconv.Itoa(n))
			if size <= MaxTrials {
				size *= n // size <= MaxTrials and n is bounded by the message: no overflow
			}
		}
		if size > MaxTrials {
			ps.add("space.grid", fmt.Sprintf("%s values make more than %d trials; the limit is %d: use fewer values or a random space", strings.Join(factors, " × "), MaxTrials, MaxTrials))
			return 0
		}
		return size
	case sp.Random != nil:
		r := sp.Random
		ok := true
		if r.Count <= 0 || r.Count > MaxTrials {
			ps.add("space.random.count", fmt.Sprintf("must be between 1 and %d, got %d", MaxTrials, r.Count))
			ok = false
		}
		if len(r.Params) == 0 {
			ps.add("space.random.params", `empty: give each parameter's distribution, e.g. {"lr": {"type": "log_uniform", "min": 1e-4, "max": 0.1}}`)
			ok = false
		}
		if !ok {
			return 0
		}
		return r.Count
	}
	if len(sp.List) == 0 {
		ps.add("space.list", "empty: give at least one trial's parameters")
		return 0
	}
	if len(sp.List) > MaxTrials {
		ps.add("space.list", fmt.Sprintf("%d trials; the limit is %d", len(sp.List), MaxTrials))
		return 0
	}
	return len(sp.List)
}

// checkParams checks every parameter name and value in fixed and in the space
// against the template, once per value rather than once per trial.
func (s Spec) checkParams(t jobs.Template, ps *problems) {
	known := func(field, name string) (jobs.ParamSpec, bool) {
		decl, ok := t.Params[name]
		if !ok {
			ps.add(field, fmt.Sprintf("unknown parameter (template %q takes: %s)", s.Template, paramList(t)))
		}
		return decl, ok
	}
	value := func(field string, decl jobs.ParamSpec, raw json.RawMessage) {
		if _, err := decl.Check(raw); err != nil {
			ps.add(field, err.Error())
		}
	}
	fixedOnly := func(field, name string) bool {
		if _, dup := s.Fixed[name]; dup {
			ps.add(field, "also given in fixed: a parameter is either fixed or searched, not both")
			return false
		}
		return true
	}
	for _, name := range slices.Sorted(maps.Keys(s.Fixed)) {
		if decl, ok := known("fixed."+name, name); ok {
			value("fixed."+name, decl, s.Fixed[name])
		}
	}
	inSpace := map[string]bool{}
	sp := s.Space
	switch {
	case sp.Grid != nil:
		for _, name := range slices.Sorted(maps.Keys(sp.Grid)) {
			field := "space.grid." + name
			inSpace[name] = true
			decl, ok := known(field, name)
			if !ok || !fixedOnly(field, name) {
				continue
			}
			for i, raw := range sp.Grid[name] {
				value(fmt.Sprintf("%s[%d]", field, i), decl, raw)
			}
		}
	case sp.Random != nil:
		for _, name := range slices.Sorted(maps.Keys(sp.Random.Params)) {
			field := "space.random.params." + name
			inSpace[name] = true
			decl, ok := known(field, name)
			if !ok || !fixedOnly(field, name) {
				continue
			}
			checkDist(field, decl, sp.Random.Params[name], ps)
		}
	case sp.List != nil:
		for i, entry := range sp.List {
			for _, name := range slices.Sorted(maps.Keys(entry)) {
				field := fmt.Sprintf("space.list[%d].%s", i, name)
				decl, ok := known(field, name)
				if !ok || !fixedOnly(field, name) {
					continue
				}
				value(field, decl, entry[name])
			}
			for _, name := range slices.Sorted(maps.Keys(t.Params)) {
				_, inEntry := entry[name]
				_, fixed := s.Fixed[name]
				if t.Params[name].Required && !inEntry && !fixed {
					ps.add(fmt.Sprintf("space.list[%d].%s", i, name), fmt.Sprintf("missing required %s parameter: give it in this entry or in fixed", t.Params[name].Type))
				}
			}
		}
		return
	}
	for _, name := range slices.Sorted(maps.Keys(t.Params)) {
		_, fixed := s.Fixed[name]
		if t.Params[name].Required && !inSpace[name] && !fixed {
			ps.add("fixed."+name, fmt.Sprintf("missing required %s parameter: give it in fixed or in the search space", t.Params[name].Type))
		}
	}
}

func paramList(t jobs.Template) string {
	names := slices.Sorted(maps.Keys(t.Params))
	if len(names) == 0 {
		return "no parameters"
	}
	return strings.Join(names, ", ")
}
