package workers

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestEndedLogForgetsByAgeAndCount: an end is found by its attempt (the
// members of one gang together) until it is older than endedKeep, or more
// than endedMax newer ends came after it.
func TestEndedLogForgetsByAgeAndCount(t *testing.T) {
	l := newEndedLog()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	end := func(id string, attempt, member int, at time.Time) queues.Ended {
		return queues.Ended{JobID: id, Attempt: attempt, Worker: "w", Member: member, State: jobs.StateSucceeded, At: at}
	}
	l.add(end("g", 1, 0, t0))
	l.add(end("g", 1, 1, t0.Add(time.Second)))
	l.add(end("g", 2, 0, t0.Add(2*time.Second)))
	if got := l.ends(queues.Delivery{JobID: "g", Attempt: 1}); len(got) != 2 || got[0].Member != 0 || got[1].Member != 1 {
		t.Fatalf("ends of g:1 = %+v, want members 0 and 1", got)
	}
	if got := l.ends(queues.Delivery{JobID: "g", Attempt: 3}); len(got) != 0 {
		t.Fatalf("ends of an attempt never ended: %+v", got)
	}
	// Past the first end's keep, not the second's.
	l.add(end("x", 1, -1, t0.Add(endedKeep+500*time.Millisecond)))
	if got := l.ends(queues.Delivery{JobID: "g", Attempt: 1}); len(got) != 1 || got[0].Member != 1 {
		t.Fatalf("ends of g:1 after the first aged out = %+v, want member 1 only", got)
	}
	for i := range endedMax {
		l.add(end(fmt.Sprint("n", i), 1, -1, t0.Add(endedKeep)))
	}
	if len(l.order) != endedMax || len(l.by) != endedMax {
		t.Fatalf("%d ends in order, %d attempts kept; want %d of each", len(l.order), len(l.by), endedMax)
	}
	if got := l.ends(queues.Delivery{JobID: "x", Attempt: 1}); len(got) != 0 {
		t.Fatal("the oldest end outlived endedMax newer ones")
	}
	if got := l.ends(queues.Delivery{JobID: "n0", Attempt: 1}); len(got) != 1 {
		t.Fatal("an end within the bound was forgotten")
	}
	long := end("long", 1, -1, t0.Add(endedKeep))
	long.Error = "a" + strings.Repeat("é", endedErrorMax) // two bytes each after one: the cut falls inside one
	l.add(long)
	got := l.ends(queues.Delivery{JobID: "long", Attempt: 1})
	if len(got) != 1 || len(got[0].Error) > endedErrorMax+len(" [cut]") || !utf8.ValidString(got[0].Error) || !strings.HasSuffix(got[0].Error, " [cut]") {
		t.Fatalf("a long error remembered as %d bytes (%q...)", len(got[0].Error), got[0].Error[:min(20, len(got[0].Error))])
	}
}

// TestAnAssemblingMemberRunsHere: a gang member being claimed, or waiting
// claimed for its gang, counts as run here, so a beat that names it (its
// gang started, this member not enlisted yet) gets no word that this
// worker runs none of the gang; two members of one attempt are counted
// apart.
func TestAnAssemblingMemberRunsHere(t *testing.T) {
	w := &Worker{}
	d := queues.Delivery{JobID: "g", Attempt: 2, Members: 2}
	done0 := w.assemble(d)
	done1 := w.assemble(queues.Delivery{JobID: "g", Attempt: 2, Member: 1, Members: 2})
	if !w.runs(d) || w.runs(queues.Delivery{JobID: "g", Attempt: 3}) {
		t.Fatal("an assembling member does not count as run here, or another attempt does")
	}
	done0()
	if !w.runs(d) {
		t.Fatal("one member of two done assembling, and the attempt no longer counts as run here")
	}
	done1()
	if w.runs(d) || len(w.assembling) != 0 {
		t.Fatalf("both done, and the attempt still counts as run here (%v)", w.assembling)
	}
}
