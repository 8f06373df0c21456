package events

import (
	"encoding/json"
	"testing"
	"time"
)

func TestOverflowRoundTripsThroughJSON(t *testing.T) {
	o := Overflow{JobID: "j1", Attempt: 2, Queue: "overflow@eu", Pool: "od-eu", Waited: 2500 * time.Millisecond,
		Reason: "rule 7", Time: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	e := o.Event()
	if err := e.Validate(); err != nil {
		t.Fatal(err)
	}
	subj, err := Subjects{}.For(e)
	if err != nil || subj != "ballast.events.job.j1" {
		t.Fatalf("subject %q, %v; want the job's", subj, err)
	}
	b, _ := json.Marshal(e)
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got, ok := ParseOverflow(back)
	if !ok || got != o {
		t.Fatalf("ParseOverflow = %+v, %v; want %+v", got, ok, o)
	}
	if _, ok := ParseOverflow(Event{Type: TypeJobQueued}); ok {
		t.Fatal("a job.queued event parsed as an overflow")
	}
}
