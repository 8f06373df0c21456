package pipeline

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestDue(t *testing.T) {
	daily := "0 2 * * *"
	tests := []struct {
		name, spec   string
		last, now    string // last "" means no previous run
		skip, latest string // expected fire time per policy, "" for none
	}{
		{name: "on time", spec: daily, last: "2026-01-01T02:00:00Z", now: "2026-01-02T02:00:10Z",
			skip: "2026-01-02T02:00:00Z", latest: "2026-01-02T02:00:00Z"},
		{name: "exactly at the time", spec: daily, last: "2026-01-01T02:00:00Z", now: "2026-01-02T02:00:00Z",
			skip: "2026-01-02T02:00:00Z", latest: "2026-01-02T02:00:00Z"},
		{name: "not yet", spec: daily, last: "2026-01-01T02:00:00Z", now: "2026-01-02T01:59:59Z"},
		{name: "already handled", spec: daily, last: "2026-01-02T02:00:00Z", now: "2026-01-02T02:00:30Z"},
		{name: "three-day outage", spec: daily, last: "2026-01-01T02:00:00Z", now: "2026-01-04T12:00:00Z",
			latest: "2026-01-04T02:00:00Z"},
		{name: "three-day outage ending at a fire time", spec: daily, last: "2026-01-01T02:00:00Z", now: "2026-01-04T02:00:45Z",
			skip: "2026-01-04T02:00:00Z", latest: "2026-01-04T02:00:00Z"},
		{name: "just past the grace", spec: daily, last: "2026-01-01T02:00:00Z", now: "2026-01-02T02:01:01Z",
			latest: "2026-01-02T02:00:00Z"},
		{name: "no previous run, between times", spec: daily, now: "2026-01-04T12:00:00Z"},
		{name: "no previous run, on time", spec: daily, now: "2026-01-04T02:00:20Z",
			skip: "2026-01-04T02:00:00Z", latest: "2026-01-04T02:00:00Z"},
		{name: "no previous run, past the grace", spec: daily, now: "2026-01-04T02:05:00Z"},
		{name: "seconds spec after three days", spec: "*/5 * * * * *", last: "2026-01-01T12:00:00Z", now: "2026-01-04T12:00:07Z",
			skip: "2026-01-04T12:00:05Z", latest: "2026-01-04T12:00:05Z"},
		{name: "clock went backwards", spec: daily, last: "2026-01-05T02:00:00Z", now: "2026-01-04T02:00:10Z"},
		{name: "yearly after six years", spec: "0 0 1 1 *", last: "2020-01-01T00:00:00Z", now: "2026-06-01T00:00:00Z",
			latest: "2026-01-01T00:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, tc.spec, "UTC")
			var last time.Time
			if tc.last != "" {
				last = utc(tc.last)
			}
			for _, c := range []struct {
				policy CatchUp
				want   string
			}{{CatchUpSkip, tc.skip}, {CatchUpLatest, tc.latest}} {
				got := due(s, last, utc(tc.now), c.policy)
				switch {
				case c.want == "" && len(got) != 0:
					t.Errorf("%s: got %v, want nothing", c.policy, got)
				case c.want != "" && (len(got) != 1 || !got[0].Equal(utc(c.want))):
					t.Errorf("%s: got %v, want [%s]", c.policy, got, c.want)
				}
			}
		})
	}
}

func TestDueInZoneAcrossDST(t *testing.T) {
	// A New York 02:30 pipeline whose controller was down over the spring-forward
	// weekend catches up the run that fired at the jump (03:00 EDT), then
	// the next day's run fires on time.
	s := mustParse(t, "30 2 * * *", "America/New_York")
	last := utc("2026-03-06T07:30:00Z")
	got := due(s, last, utc("2026-03-08T12:00:00Z"), CatchUpLatest)
	if len(got) != 1 || !got[0].Equal(utc("2026-03-08T07:00:00Z")) {
		t.Fatalf("got %v", got)
	}
	got = due(s, got[0], utc("2026-03-09T06:30:05Z"), CatchUpSkip)
	if len(got) != 1 || !got[0].Equal(utc("2026-03-09T06:30:00Z")) {
		t.Fatalf("got %v", got)
	}
}

func TestLatestIsFastAfterLongOutage(t *testing.T) {
	s := mustParse(t, "*/1 * * * * *", "UTC")
	start := time.Now() // measures the test itself, not an input
	got, ok := Latest(s, utc("2023-01-01T00:00:00Z"), utc("2026-01-01T00:00:00.5Z"))
	if !ok || !got.Equal(utc("2026-01-01T00:00:00Z")) {
		t.Fatalf("Latest = %s, %v", got, ok)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Latest took %s; it should narrow down, not step through every second", d)
	}
}

// TestLatestMatchesWalk checks Latest against stepping through every fire
// time, for random schedules, zones and ranges.
func TestLatestMatchesWalk(t *testing.T) {
	specs := []string{"*/7 * * * *", "30 2 * * *", "15 */3 * * 1-5", "0 0 29 2 *", "*/20 * 2 * * *", "0 1,13 * * 0"}
	zones := []string{"UTC", "America/New_York", "Europe/Berlin", "Asia/Tokyo", "Australia/Lord_Howe"}
	base := utc("2024-01-01T00:00:00Z")
	rapid.Check(t, func(rt *rapid.T) {
		s, err := Parse(rapid.SampledFrom(specs).Draw(rt, "spec"), rapid.SampledFrom(zones).Draw(rt, "zone"))
		if err != nil {
			rt.Fatal(err)
		}
		after := base.Add(time.Duration(rapid.Int64Range(0, 2*365*24*3600).Draw(rt, "after")) * time.Second)
		now := after.Add(time.Duration(rapid.Int64Range(1, 40*24*3600).Draw(rt, "span")) * time.Second)
		var want time.Time
		for n := s.Next(after); !n.IsZero() && !n.After(now); n = s.Next(n) {
			want = n
		}
		got, ok := Latest(s, after, now)
		if ok != !want.IsZero() || !got.Equal(want) {
			rt.Fatalf("Latest(%s, %s) = %s, %v; walk says %s", after, now, got, ok, want)
		}
	})
}

func TestDedupeKey(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	got := DedupeKey("nightly", time.Date(2026, 3, 8, 3, 0, 0, 0, ny))
	if want := "pipeline:nightly:2026-03-08T07:00:00Z"; got != want {
		t.Errorf("DedupeKey = %q, want %q", got, want)
	}
	if DedupeKey("nightly", utc("2026-03-08T07:00:00Z")) != got {
		t.Error("the same instant in another zone must give the same key")
	}
}

// due is Decide with the default grace, as the times to fire (at most one):
// the shape these cases were written in.
func due(s Schedule, handled, now time.Time, catchUp CatchUp) []time.Time {
	if f := Decide(s, handled, now, catchUp, FireGrace); f.Fire {
		return []time.Time{f.Time}
	}
	return nil
}
