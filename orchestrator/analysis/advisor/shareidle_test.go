package advisor

import (
	"strings"
	"testing"
	"time"
)

// A share its owner leaves 55% idle, using at most 3 of 8 slots nine
// tenths of the time, is advised down to 3; a share idle on average but
// used whole at its peaks, one idle under 30%, and one judged on too
// short a window are left alone.
func TestShareIdleSuggestsAShare(t *testing.T) {
	w := balanced()
	w.Teams = []TeamShare{
		{Team: "ml", Share: 8, OwnIdle: 0.55, Lent: 0.4, Covered: 24 * time.Hour, UsageP90: 2.5},
		{Team: "peaky", Share: 4, OwnIdle: 0.6, Covered: 24 * time.Hour, UsageP90: 4},
		{Team: "busy", Share: 4, OwnIdle: 0.3, Covered: 24 * time.Hour, UsageP90: 1},
		{Team: "young", Share: 4, OwnIdle: 0.9, Covered: 30 * time.Minute, UsageP90: 0},
	}
	rs := ofKind(Advise(w), KindShareIdle)
	if len(rs) != 1 {
		t.Fatalf("got %d share advice, want 1 (ml): %+v", len(rs), rs)
	}
	r := rs[0]
	ev := r.Evidence.Share
	if ev == nil || ev.Team != "ml" || ev.Suggested != 3 || ev.Threshold != 0.3 || r.Severity != SeverityInfo {
		t.Fatalf("evidence %+v", ev)
	}
	for _, s := range []string{"shares.teams.ml.slots from 8 to 3", "55%", "borrowed 40%", "2.5 slots"} {
		if !strings.Contains(r.Action, s) {
			t.Errorf("action %q does not mention %q", r.Action, s)
		}
	}
	// A lower threshold takes in the busy team as well.
	o := DefaultOptions()
	o.MaxIdle = 0.25
	if rs := ofKind(o.Advise(w), KindShareIdle); len(rs) != 2 || rs[1].Evidence.Share.Team != "busy" || rs[1].Evidence.Share.Suggested != 1 {
		t.Fatalf("at 25%%: %+v", rs)
	}
}
