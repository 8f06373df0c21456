package events

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// TestEventJSONIsWhatEncodingJSONWrites: the publisher's own encoding of an
// event gives the bytes json.Marshal gives, over random events with every
// field set or not and strings that need escaping; and it knows every
// field of Event, so a field added later fails here until it is encoded.
func TestEventJSONIsWhatEncodingJSONWrites(t *testing.T) {
	if n := reflect.TypeFor[Event]().NumField(); n != 14 {
		t.Fatalf("Event has %d fields; AppendJSON writes 14: teach it the new ones, then change this count", n)
	}
	strs := []string{"", "job-01HZX7", "burst", `a"b\c`, "<x>&", "line\nbreak", "é日本", "\u2028", "bad\xff", "ctl\x01"}
	values := []any{"s", "<&>", 3, -2.5, 1e21, true, nil, []int{1, 2}, map[string]any{"z": 1, "a": "b"}, jobs.StateRunning,
		json.RawMessage(`{ "spaced" : [1, 2] }`), time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
	r := rand.New(rand.NewPCG(1, 2))
	pick := func() string { return strs[r.IntN(len(strs))] }
	for i := range 3000 {
		e := Event{ID: pick(), Type: Type(pick()), JobID: pick(), Attempt: r.IntN(3) - 1, Runs: r.IntN(3), State: jobs.State(pick()),
			Queue: pick(), Worker: pick(), Reason: pick(), Pipeline: pick(), RunID: pick(), SweepID: pick()}
		switch r.IntN(4) {
		case 0: // the zero time
		case 1:
			e.Time = time.Unix(r.Int64N(4e9), r.Int64N(1e9)).UTC()
		case 2:
			e.Time = time.Unix(r.Int64N(4e9), 0).In(time.FixedZone("x", 3600*r.IntN(12)))
		default:
			e.Time = time.Now()
		}
		if r.IntN(3) > 0 {
			e.Data = map[string]any{}
			for range r.IntN(5) {
				e.Data[pick()] = values[r.IntN(len(values))]
			}
		}
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.AppendJSON(nil)
		if err != nil || string(got) != string(want) {
			t.Fatalf("event %d: AppendJSON gives\n%s (%v)\nencoding/json gives\n%s", i, got, err, want)
		}
	}
	// What encoding/json refuses, AppendJSON refuses too.
	for _, e := range []Event{{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, {Data: map[string]any{"f": func() {}}}} {
		if _, err := json.Marshal(e); err == nil {
			t.Fatalf("encoding/json takes %+v", e)
		}
		if _, err := e.AppendJSON(nil); err == nil {
			t.Fatalf("AppendJSON takes %+v, which encoding/json refuses", e)
		}
	}
}
