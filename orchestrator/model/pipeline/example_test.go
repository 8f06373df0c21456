package pipeline_test

import (
	"fmt"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/pipeline"
)

// The controller's tick: given the last handled time and the clock's now,
// decide what to fire and under which key.
func ExampleDecide() {
	s, err := pipeline.Parse("30 2 * * *", "America/New_York")
	if err != nil {
		panic(err)
	}
	last := time.Date(2026, 3, 5, 7, 30, 0, 0, time.UTC)
	now := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC) // the controller was down for three days
	f := pipeline.Decide(s, last, now, pipeline.CatchUpLatest, pipeline.FireGrace)
	fmt.Println(f.Time, f.Fire, f.Late, pipeline.DedupeKey("nightly", f.Time))
	f = pipeline.Decide(s, last, now, pipeline.CatchUpSkip, pipeline.FireGrace)
	fmt.Println(f.Fire, "with skip: record", f.Time, "as handled")
	// Output:
	// 2026-03-08 03:00:00 -0400 EDT true true pipeline:nightly:2026-03-08T07:00:00Z
	// false with skip: record 2026-03-08 03:00:00 -0400 EDT as handled
}

func ExampleOrder() {
	p := pipeline.Pipeline{Steps: map[string]pipeline.Step{
		"train":  {Template: "train", DependsOn: []string{"fetch"}},
		"fetch":  {Template: "fetch"},
		"report": {Template: "report", DependsOn: []string{"train"}, PostProcessing: true},
	}}
	order, _ := pipeline.Order(p)
	fmt.Println(order)
	start, skip := pipeline.Ready(p, map[string]pipeline.StepState{"fetch": pipeline.StepFailed})
	fmt.Println(start, skip)
	// Output:
	// [fetch train report]
	// [] [train report]
}
