package policy

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestRelease(t *testing.T) {
	perSec := elasticPool("os", PoolOnDemand, "eu", 1.0)
	perHour := elasticPool("oh", PoolOnDemand, "eu", 1.0)
	perHour.Billing = BillingPerHour
	minHour := elasticPool("om", PoolOnDemand, "eu", 1.0)
	minHour.MinBilling = time.Hour
	fxp, fxw := fixedWith(4, 4) // full: queued burst stays elastic
	pools := append(fxp, perSec, perHour, minHour)

	idle := func(id, pool string, started, idleFor time.Duration) Worker {
		w := worker(id, pool, 4, 0)
		w.StartedAt = ago(started)
		w.IdleSince = ago(idleFor)
		return w
	}
	one := func(w Worker, js ...Job) Snapshot { return snap(pools, append([]Worker{w}, fxw...), js...) }
	draining := idle("w", "oh", 10*time.Minute, 0)
	draining.State = WorkerDraining
	unknownIdle := idle("w", "os", time.Hour, time.Hour)
	unknownIdle.IdleSince = time.Time{}
	starting := idle("w", "os", time.Hour, time.Hour)
	starting.State = WorkerStarting
	lagging := idle("w", "os", time.Hour, time.Hour)
	noStart := idle("w", "oh", 0, time.Hour)
	noStart.StartedAt = time.Time{}
	noStart.LaunchRequestedAt = ago(time.Hour + 59*time.Minute)

	runCases(t, []planCase{
		{"per second: idle past ttl goes", one(idle("w", "os", time.Hour, 11*time.Minute)), t0, "release(w)"},
		{"per second: idle under ttl stays", one(idle("w", "os", time.Hour, 9*time.Minute)), t0, ""},
		{"per hour: most of the paid hour left stays", one(idle("w", "oh", 70*time.Minute, 15*time.Minute)), t0, ""},
		{"per hour: inside the margin goes", one(idle("w", "oh", 118*time.Minute+30*time.Second, 15*time.Minute)), t0, "release(w)"},
		{"per hour: just past the boundary a new hour is paid", one(idle("w", "oh", 2*time.Hour, 15*time.Minute)), t0, ""},
		{"per hour: inside the margin but under ttl stays", one(idle("w", "oh", 59*time.Minute, 5*time.Minute)), t0, ""},
		{"per hour: launch time stands in for an unknown start", one(noStart), t0, "release(w)"},
		{"minimum billing not used up stays", one(idle("w", "om", 20*time.Minute, 15*time.Minute)), t0, ""},
		{"minimum billing used up goes", one(idle("w", "om", 59*time.Minute, 15*time.Minute)), t0, "release(w)"},
		{"never with a running job, whatever the heartbeat says", one(lagging, running("r", jobs.ClassBurst, lagging, ago(time.Minute))), t0, ""},
		{"draining and empty goes at once", one(draining), t0, "release(w)"},
		{"kept while queued work needs it", one(idle("w", "os", time.Hour, time.Hour), queued("q", jobs.ClassBurst, QueueBurst, ago(time.Minute))), t0, ""},
		{"unknown idle time stays", one(unknownIdle), t0, ""},
		{"a starting worker is not released", one(starting), t0, ""},
	})
}

func TestPaidUntil(t *testing.T) {
	start := t0
	cases := []struct {
		billing Billing
		min     time.Duration
		at      time.Duration
		want    time.Duration
	}{
		{BillingPerHour, 0, 0, time.Hour},
		{BillingPerHour, 0, 59 * time.Minute, time.Hour},
		{BillingPerHour, 0, time.Hour, 2 * time.Hour},
		{BillingPerMinute, 0, 90 * time.Second, 2 * time.Minute},
		{BillingPerSecond, 10 * time.Minute, 3 * time.Minute, 10 * time.Minute},
		{BillingPerSecond, 0, 3 * time.Minute, 3 * time.Minute},
	}
	for _, c := range cases {
		p := Pool{Billing: c.billing, MinBilling: c.min}
		if got := p.PaidUntil(start, start.Add(c.at)).Sub(start); got != c.want {
			t.Errorf("%s min %s at +%s: paid until +%s, want +%s", c.billing, c.min, c.at, got, c.want)
		}
	}
	if got := (Pool{Billing: BillingPerHour}).PaidUntil(time.Time{}, t0); !got.IsZero() {
		t.Errorf("unknown start: got %s, want zero", got)
	}
}
