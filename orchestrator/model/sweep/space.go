package sweep

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// pcgStream is the second PCG seed word. It is fixed so that a sweep's trials
// depend on its Seed only; changing it changes every random sweep.
const pcgStream = 0x9e3779b97f4a7c15

// maxExactInt is the largest integer a float64 holds exactly.
const maxExactInt = 1 << 53

// checkDist validates one distribution of a random search against the
// parameter it draws.
func checkDist(field string, decl jobs.ParamSpec, d Dist, ps *problems) {
	numeric := func(want string, types ...jobs.ParamType) bool {
		for _, ty := range types {
			if decl.Type == ty {
				return true
			}
		}
		ps.add(field+".type", fmt.Sprintf("%s draws %s, but the parameter is of type %s (use choice for it)", d.Type, want, decl.Type))
		return false
	}
	switch d.Type {
	case DistUniform, DistLogUniform:
		if !numeric("floats", jobs.ParamFloat) {
			return
		}
	case DistIntUniform:
		if !numeric("integers", jobs.ParamInt, jobs.ParamFloat) {
			return
		}
	case DistChoice:
		if d.Min != nil || d.Max != nil {
			ps.add(field+".min", "choice takes values, not min and max")
		}
		if len(d.Values) == 0 {
			ps.add(field+".values", "empty: give at least one value to choose from")
		}
		for i, raw := range d.Values {
			if _, err := decl.Check(raw); err != nil {
				ps.add(fmt.Sprintf("%s.values[%d]", field, i), err.Error())
			}
		}
		return
	case "":
		ps.add(field+".type", "missing: use uniform, log_uniform, int_uniform or choice")
		return
	default:
		ps.add(field+".type", fmt.Sprintf("unknown distribution %q (use uniform, log_uniform, int_uniform or choice)", d.Type))
		return
	}

	// A numeric distribution.
	if len(d.Values) > 0 {
		ps.add(field+".values", fmt.Sprintf("values are only for type choice; %s takes min and max", d.Type))
	}
	bound := func(name string, v *float64) bool {
		switch {
		case v == nil:
			ps.add(field+"."+name, fmt.Sprintf("missing: %s needs min and max", d.Type))
		case math.IsNaN(*v) || math.IsInf(*v, 0):
			ps.add(field+"."+name, "must be a finite number")
		case d.Type == DistIntUniform && (*v != math.Trunc(*v) || math.Abs(*v) >= maxExactInt):
			ps.add(field+"."+name, fmt.Sprintf("int_uniform bounds are integers, got %v", *v))
		case d.Type == DistLogUniform && *v <= 0:
			ps.add(field+"."+name, fmt.Sprintf("log_uniform bounds must be above 0, got %v (use uniform for ranges that reach 0)", *v))
		default:
			b, _ := json.Marshal(*v)
			if _, err := decl.Check(b); err != nil {
				ps.add(field+"."+name, "outside the parameter's range: "+err.Error())
				return false
			}
			return true
		}
		return false
	}
	okMin, okMax := bound("min", d.Min), bound("max", d.Max)
	if okMin && okMax && *d.Min >= *d.Max {
		ps.add(field+".max", fmt.Sprintf("must be above min (%v), got %v; for a single value put the parameter in fixed", *d.Min, *d.Max))
	}
}

// points returns each trial's own parameters (without the fixed ones), in
// trial order. The space has been checked.
func (sp Space) points() []map[string]json.RawMessage {
	switch {
	case sp.Grid != nil:
		return gridPoints(sp.Grid)
	case sp.Random != nil:
		return randomPoints(sp.Random)
	}
	out := make([]map[string]json.RawMessage, len(sp.List))
	for i, entry := range sp.List {
		out[i] = make(map[string]json.RawMessage, len(entry))
		for k, v := range entry {
			out[i][k] = v
		}
	}
	return out
}

// gridPoints is the cartesian product: parameters sorted by name, the last
// one varying fastest, values in the order given.
func gridPoints(grid map[string][]json.RawMessage) []map[string]json.RawMessage {
	names := slices.Sorted(maps.Keys(grid))
	size := 1
	for _, n := range names {
		size *= len(grid[n])
	}
	out := make([]map[string]json.RawMessage, 0, size)
	idx := make([]int, len(names))
	for range size {
		p := make(map[string]json.RawMessage, len(names))
		for j, n := range names {
			p[n] = grid[n][idx[j]]
		}
		out = append(out, p)
		for j := len(names) - 1; j >= 0; j-- { // odometer step
			idx[j]++
			if idx[j] < len(grid[names[j]]) {
				break
			}
			idx[j] = 0
		}
	}
	return out
}

// randomPoints draws Count trials. For each trial the parameters are drawn in
// name order from one PCG stream seeded by Seed, so the result depends only on
// the spec.
func randomPoints(r *Random) []map[string]json.RawMessage {
	rng := rand.New(rand.NewPCG(r.Seed, pcgStream))
	names := slices.Sorted(maps.Keys(r.Params))
	out := make([]map[string]json.RawMessage, r.Count)
	for i := range out {
		p := make(map[string]json.RawMessage, len(names))
		for _, n := range names {
			p[n] = draw(rng, r.Params[n])
		}
		out[i] = p
	}
	return out
}

// draw returns one value of d as JSON. The distribution has been checked.
func draw(rng *rand.Rand, d Dist) json.RawMessage {
	switch d.Type {
	case DistChoice:
		return d.Values[rng.IntN(len(d.Values))]
	case DistIntUniform:
		lo, hi := int64(*d.Min), int64(*d.Max)
		v := lo + rng.Int64N(hi-lo+1)
		return json.RawMessage(strconv.FormatInt(v, 10))
	case DistLogUniform:
		lo, hi := math.Log(*d.Min), math.Log(*d.Max)
		v := math.Exp(lo + rng.Float64()*(hi-lo))
		return floatJSON(clamp(v, *d.Min, *d.Max))
	}
	v := *d.Min + rng.Float64()*(*d.Max-*d.Min)
	return floatJSON(clamp(v, *d.Min, *d.Max))
}

// clamp keeps rounding from leaving [lo, hi].
func clamp(v, lo, hi float64) float64 {
	return math.Min(math.Max(v, lo), hi)
}

func floatJSON(v float64) json.RawMessage {
	return json.RawMessage(strconv.FormatFloat(v, 'g', -1, 64))
}
