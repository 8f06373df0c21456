package sweep

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestGridProductOrderAndCount(t *testing.T) {
	cat := testCatalog(t)
	spec := Spec{
		Template: "train",
		Space: Space{Grid: map[string][]json.RawMessage{
			"opt": vals(t, "sgd", "adam"),
			"lr":  vals(t, 0.1, 0.01, 0.001),
		}},
		Fixed:          obj(t, "epochs", 5),
		IdempotencyKey: "sw-1",
	}
	trials, err := Expand(spec, cat)
	if err != nil {
		t.Fatalf("Expand: %v", err)
	}
	if len(trials) != 6 {
		t.Fatalf("got %d trials, want 6", len(trials))
	}
	// Params sorted by name (lr, opt); the last one varies fastest.
	want := [][2]string{
		{"0.1", `"sgd"`}, {"0.1", `"adam"`},
		{"0.01", `"sgd"`}, {"0.01", `"adam"`},
		{"0.001", `"sgd"`}, {"0.001", `"adam"`},
	}
	for i, tr := range trials {
		if tr.Index != i {
			t.Errorf("trial %d has index %d", i, tr.Index)
		}
		got := [2]string{string(tr.Params["lr"]), string(tr.Params["opt"])}
		if got != want[i] {
			t.Errorf("trial %d params %v, want %v", i, got, want[i])
		}
		if string(tr.Params["epochs"]) != "5" {
			t.Errorf("trial %d lost the fixed epochs: %s", i, tr.Params["epochs"])
		}
		if tr.Spec.Class != jobs.ClassBurst || tr.Spec.Rhythm != jobs.RhythmSweep {
			t.Errorf("trial %d class/rhythm %s/%s, want burst/sweep", i, tr.Spec.Class, tr.Spec.Rhythm)
		}
		if tr.Spec.IdempotencyKey != "" {
			t.Errorf("trial %d has key %q; trial keys are set at enqueue from the sweep's ID", i, tr.Spec.IdempotencyKey)
		}
		if tr.Spec.Params["epochs"] != int64(5) || tr.Spec.Team != "ml" {
			t.Errorf("trial %d spec not resolved: %+v", i, tr.Spec)
		}
	}
	if got := strings.Join(trials[3].Spec.Command, " "); got != "python train.py --epochs=5 --lr=0.01 --opt=adam --wd=0" {
		t.Errorf("trial 3 command %q", got)
	}
}

func TestGridThreeParamsCount(t *testing.T) {
	grid := map[string][]json.RawMessage{"a": vals(t, 1, 2), "b": vals(t, 1, 2, 3), "c": vals(t, 1, 2, 3, 4)}
	trials, err := Expand(Spec{Template: "wide", Space: Space{Grid: grid}}, testCatalog(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 24 {
		t.Fatalf("got %d trials, want 24", len(trials))
	}
	seen := map[string]bool{}
	for _, tr := range trials {
		k := fmt.Sprintf("%s/%s/%s", tr.Params["a"], tr.Params["b"], tr.Params["c"])
		if seen[k] {
			t.Errorf("duplicate point %s", k)
		}
		seen[k] = true
	}
	if got := fmt.Sprintf("%s/%s/%s", trials[23].Params["a"], trials[23].Params["b"], trials[23].Params["c"]); got != "2/3/4" {
		t.Errorf("last trial %s, want 2/3/4", got)
	}
}

func TestGridOversizeRejectedBeforeExpansion(t *testing.T) {
	big := make([]json.RawMessage, 101)
	for i := range big {
		big[i] = json.RawMessage(strconv.Itoa(i))
	}
	// Third factor would make the product overflow an int if multiplied blindly.
	huge := make([]json.RawMessage, MaxTrials)
	for i := range huge {
		huge[i] = json.RawMessage(strconv.Itoa(i))
	}
	for name, grid := range map[string]map[string][]json.RawMessage{
		"101x101":         {"a": big, "b": big},
		"101x10000x10000": {"a": big, "b": huge, "c": huge},
	} {
		t.Run(name, func(t *testing.T) {
			trials, err := Expand(Spec{Template: "wide", Space: Space{Grid: grid}}, testCatalog(t))
			if trials != nil {
				t.Fatalf("oversize grid expanded to %d trials", len(trials))
			}
			wantField(t, err, "space.grid")
			if !strings.Contains(err.Error(), "10000") {
				t.Errorf("error does not state the limit: %v", err)
			}
		})
	}
	// Exactly at the limit is fine.
	hundred := big[:100]
	trials, err := Expand(Spec{Template: "wide", Space: Space{Grid: map[string][]json.RawMessage{"a": hundred, "b": hundred}}}, testCatalog(t))
	if err != nil || len(trials) != MaxTrials {
		t.Fatalf("100x100 grid: %d trials, %v", len(trials), err)
	}
}

func randomSpec(seed uint64, count int) Spec {
	return Spec{
		Template: "train",
		Space: Space{Random: &Random{Seed: seed, Count: count, Params: map[string]Dist{
			"lr":     {Type: DistLogUniform, Min: ptr(1e-5), Max: ptr(0.1)},
			"wd":     {Type: DistUniform, Min: ptr(-2.0), Max: ptr(3.0)},
			"epochs": {Type: DistIntUniform, Min: ptr(3.0), Max: ptr(7.0)},
			"opt":    {Type: DistChoice, Values: []json.RawMessage{json.RawMessage(`"sgd"`), json.RawMessage(`"adam"`)}},
		}}},
	}
}

func TestRandomDeterministic(t *testing.T) {
	cat := testCatalog(t)
	a, err := Expand(randomSpec(42, 50), cat)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Expand(randomSpec(42, 50), cat)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different trials")
	}
	c, err := Expand(randomSpec(43, 50), cat)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(paramsOf(a), paramsOf(c)) {
		t.Fatal("different seeds gave the same trials")
	}
	// A longer run with the same seed starts with the same trials.
	long, err := Expand(randomSpec(42, 80), cat)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(paramsOf(long[:50]), paramsOf(a)) {
		t.Error("count changed the first trials")
	}
}

func paramsOf(ts []Trial) []map[string]json.RawMessage {
	out := make([]map[string]json.RawMessage, len(ts))
	for i, tr := range ts {
		out[i] = tr.Params
	}
	return out
}

func TestRandomDistributionsWithinBounds(t *testing.T) {
	trials, err := Expand(randomSpec(7, 2000), testCatalog(t))
	if err != nil {
		t.Fatal(err)
	}
	ints := map[int64]int{}
	opts := map[string]int{}
	decades := map[int]int{}
	for _, tr := range trials {
		p := tr.Spec.Params
		lr, wd, ep := p["lr"].(float64), p["wd"].(float64), p["epochs"].(int64)
		if lr < 1e-5 || lr > 0.1 {
			t.Fatalf("lr %v outside [1e-5, 0.1]", lr)
		}
		if wd < -2 || wd > 3 {
			t.Fatalf("wd %v outside [-2, 3]", wd)
		}
		if ep < 3 || ep > 7 {
			t.Fatalf("epochs %v outside [3, 7]", ep)
		}
		ints[ep]++
		opts[p["opt"].(string)]++
		decades[int(math.Floor(math.Log10(lr)))]++
	}
	if len(ints) != 5 {
		t.Errorf("int_uniform hit %v, want all of 3..7 (inclusive)", ints)
	}
	if opts["sgd"] == 0 || opts["adam"] == 0 {
		t.Errorf("choice hit %v", opts)
	}
	// log_uniform over four decades puts about a quarter in each; a uniform
	// draw would put ~90% in the top decade.
	for d := -5; d <= -2; d++ {
		if n := decades[d]; n < 350 || n > 650 {
			t.Errorf("log_uniform decade 1e%d got %d of 2000 (all: %v)", d, n, decades)
		}
	}
}

func TestListExpansion(t *testing.T) {
	spec := Spec{
		Template: "train",
		Fixed:    obj(t, "wd", 0.5),
		Space: Space{List: []map[string]json.RawMessage{
			obj(t, "epochs", 1, "lr", 0.2),
			obj(t, "epochs", 2, "opt", "adam"),
		}},
	}
	trials, err := Expand(spec, testCatalog(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 2 {
		t.Fatalf("%d trials", len(trials))
	}
	want0 := map[string]any{"epochs": int64(1), "lr": 0.2, "opt": "sgd", "wd": 0.5, "fast": false}
	if !reflect.DeepEqual(trials[0].Spec.Params, want0) {
		t.Errorf("trial 0 params %v, want %v", trials[0].Spec.Params, want0)
	}
	if trials[1].Spec.Params["opt"] != "adam" || trials[1].Spec.Params["lr"] != 0.01 {
		t.Errorf("trial 1 params %v", trials[1].Spec.Params)
	}
	// The caller's list is not aliased by the trials.
	trials[0].Params["epochs"] = json.RawMessage("9")
	if string(spec.Space.List[0]["epochs"]) != "1" {
		t.Error("trial params alias the spec")
	}
}

func TestExpandRejectsNamingTheField(t *testing.T) {
	grid := func(kv ...any) Space {
		g := map[string][]json.RawMessage{}
		for i := 0; i < len(kv); i += 2 {
			g[kv[i].(string)] = kv[i+1].([]json.RawMessage)
		}
		return Space{Grid: g}
	}
	random := func(count int, params map[string]Dist) Space {
		return Space{Random: &Random{Seed: 1, Count: count, Params: params}}
	}
	lrGrid := grid("lr", vals(t, 0.1))
	ep := obj(t, "epochs", 3)
	choice := func(vs ...any) Dist { return Dist{Type: DistChoice, Values: vals(t, vs...)} }
	cases := []struct {
		name  string
		spec  Spec
		field string
	}{
		{"empty space", Spec{Template: "train", Fixed: ep}, "space"},
		{"two kinds", Spec{Template: "train", Fixed: ep, Space: Space{Grid: lrGrid.Grid, List: []map[string]json.RawMessage{{}}}}, "space"},
		{"empty grid", Spec{Template: "train", Fixed: ep, Space: Space{Grid: map[string][]json.RawMessage{}}}, "space.grid"},
		{"grid param without values", Spec{Template: "train", Fixed: ep, Space: grid("lr", vals(t))}, "space.grid.lr"},
		{"grid unknown param", Spec{Template: "train", Fixed: ep, Space: grid("momentum", vals(t, 0.9))}, "space.grid.momentum"},
		{"grid bad value", Spec{Template: "train", Fixed: ep, Space: grid("lr", vals(t, 0.1, "fast", 0.2))}, "space.grid.lr[1]"},
		{"grid value out of range", Spec{Template: "train", Space: grid("epochs", vals(t, 10, 5000))}, "space.grid.epochs[1]"},
		{"grid and fixed overlap", Spec{Template: "train", Fixed: obj(t, "epochs", 3, "lr", 0.1), Space: lrGrid}, "space.grid.lr"},
		{"count zero", Spec{Template: "train", Fixed: ep, Space: random(0, map[string]Dist{"lr": {Type: DistUniform, Min: ptr(0.0), Max: ptr(1.0)}})}, "space.random.count"},
		{"count negative", Spec{Template: "train", Fixed: ep, Space: random(-3, map[string]Dist{"lr": {Type: DistUniform, Min: ptr(0.0), Max: ptr(1.0)}})}, "space.random.count"},
		{"count over limit", Spec{Template: "train", Fixed: ep, Space: random(MaxTrials+1, map[string]Dist{"lr": {Type: DistUniform, Min: ptr(0.0), Max: ptr(1.0)}})}, "space.random.count"},
		{"random without params", Spec{Template: "train", Fixed: ep, Space: random(5, nil)}, "space.random.params"},
		{"uniform min >= max", Spec{Template: "train", Fixed: ep, Space: random(5, map[string]Dist{"lr": {Type: DistUniform, Min: ptr(0.5), Max: ptr(0.5)}})}, "space.random.params.lr.max"},
		{"log_uniform min 0", Spec{Template: "train", Fixed: ep, Space: random(5, map[string]Dist{"lr": {Type: DistLogUniform, Min: ptr(0.0), Max: ptr(0.5)}})}, "space.random.params.lr.min"},
		{"uniform missing max", Spec{Template: "train", Fixed: ep, Space: random(5, map[string]Dist{"lr": {Type: DistUniform, Min: ptr(0.0)}})}, "space.random.params.lr.max"},
		{"uniform beyond param max", Spec{Template: "train", Fixed: ep, Space: random(5, map[string]Dist{"lr": {Type: DistUniform, Min: ptr(0.0), Max: ptr(2.0)}})}, "space.random.params.lr.max"},
		{"int_uniform fractional", Spec{Template: "train", Space: random(5, map[string]Dist{"epochs": {Type: DistIntUniform, Min: ptr(1.5), Max: ptr(4.0)}})}, "space.random.params.epochs.min"},
		{"uniform on int param", Spec{Template: "train", Space: random(5, map[string]Dist{"epochs": {Type: DistUniform, Min: ptr(1.0), Max: ptr(4.0)}})}, "space.random.params.epochs.type"},
		{"empty choice", Spec{Template: "train", Fixed: ep, Space: random(5, map[string]Dist{"opt": {Type: DistChoice}})}, "space.random.params.opt.values"},
		{"bad choice value", Spec{Template: "train", Fixed: ep, Space: random(5, map[string]Dist{"opt": choice("sgd", "lbfgs")})}, "space.random.params.opt.values[1]"},
		{"unknown dist", Spec{Template: "train", Fixed: ep, Space: random(5, map[string]Dist{"lr": {Type: "normal", Min: ptr(0.0), Max: ptr(1.0)}})}, "space.random.params.lr.type"},
		{"random unknown param", Spec{Template: "train", Fixed: ep, Space: random(5, map[string]Dist{"beta": choice(1)})}, "space.random.params.beta"},
		{"empty list", Spec{Template: "train", Fixed: ep, Space: Space{List: []map[string]json.RawMessage{}}}, "space.list"},
		{"list over limit", Spec{Template: "train", Fixed: ep, Space: Space{List: make([]map[string]json.RawMessage, MaxTrials+1)}}, "space.list"},
		{"list bad value", Spec{Template: "train", Space: Space{List: []map[string]json.RawMessage{obj(t, "epochs", 1), obj(t, "epochs", 2), obj(t, "epochs", 3), obj(t, "epochs", "ten")}}}, "space.list[3].epochs"},
		{"list missing required", Spec{Template: "train", Space: Space{List: []map[string]json.RawMessage{obj(t, "epochs", 1), obj(t, "lr", 0.1)}}}, "space.list[1].epochs"},
		{"list unknown param", Spec{Template: "train", Fixed: ep, Space: Space{List: []map[string]json.RawMessage{obj(t, "beta", 1)}}}, "space.list[0].beta"},
		{"missing required in grid", Spec{Template: "train", Space: lrGrid}, "fixed.epochs"},
		{"fixed bad value", Spec{Template: "train", Fixed: obj(t, "epochs", 0), Space: lrGrid}, "fixed.epochs"},
		{"fixed unknown", Spec{Template: "train", Fixed: obj(t, "epochs", 1, "nope", 1), Space: lrGrid}, "fixed.nope"},
		{"max_parallel negative", Spec{Template: "train", Fixed: ep, Space: lrGrid, MaxParallel: -1}, "max_parallel"},
		{"max_parallel over limit", Spec{Template: "train", Fixed: ep, Space: lrGrid, MaxParallel: MaxTrials + 1}, "max_parallel"},
		{"bad goal", Spec{Template: "train", Fixed: ep, Space: lrGrid, Goal: "best"}, "goal"},
		{"metric too long", Spec{Template: "train", Fixed: ep, Space: lrGrid, Metric: strings.Repeat("m", MaxMetricKeyBytes+1)}, "metric"},
		{"early stop min trials", Spec{Template: "train", Fixed: ep, Space: lrGrid, EarlyStop: &MedianRule{}}, "early_stop.min_trials"},
		{"early stop after step", Spec{Template: "train", Fixed: ep, Space: lrGrid, EarlyStop: &MedianRule{MinTrials: 3, AfterStep: -1}}, "early_stop.after_step"},
		{"idempotency key too long", Spec{Template: "train", Fixed: ep, Space: lrGrid, IdempotencyKey: strings.Repeat("k", jobs.MaxIdempotencyBytes+1)}, "idempotency_key"},
		{"missing template", Spec{Space: lrGrid}, "template"},
		{"unknown template", Spec{Template: "nope", Space: lrGrid}, "template"},
		{"core template", Spec{Template: "clean", Space: Space{List: []map[string]json.RawMessage{{}}}}, "template"},
		{"bad team", Spec{Template: "train", Fixed: ep, Space: lrGrid, Team: "Bad Team"}, "team"},
		{"bad label", Spec{Template: "train", Fixed: ep, Space: lrGrid, Labels: map[string]string{"region": "Not A Region"}}, "labels.region"},
	}
	cat := testCatalog(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			trials, err := Expand(c.spec, cat)
			if trials != nil {
				t.Errorf("got %d trials with an error", len(trials))
			}
			wantField(t, err, c.field)
		})
	}
}

func TestExpandReportsEveryProblemOnce(t *testing.T) {
	spec := Spec{
		Template:    "train",
		MaxParallel: -1,
		Team:        "Bad Team",
		Space:       Space{Grid: map[string][]json.RawMessage{"epochs": vals(t, 1, 2, 3), "lr": vals(t, 0.1, 2.0)}},
	}
	_, err := Expand(spec, testCatalog(t))
	got := fields(t, err)
	want := []string{"max_parallel", "team", "space.grid.lr[1]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
	// With the values fixed, the team error surfaces from Resolve once,
	// not once per trial.
	spec.MaxParallel = 0
	spec.Space.Grid["lr"] = vals(t, 0.1, 0.2)
	_, err = Expand(spec, testCatalog(t))
	if got := fields(t, err); !reflect.DeepEqual(got, []string{"team"}) {
		t.Errorf("fields %v, want [team]", got)
	}
}
