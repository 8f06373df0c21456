package cost

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

func TestBilledEndRoundsUpToUnitAndMinimum(t *testing.T) {
	perSecond := policy.Pool{Billing: policy.BillingPerSecond, MinBilling: 60 * s}
	perMinute := policy.Pool{Billing: policy.BillingPerMinute}
	perHour := policy.Pool{Billing: policy.BillingPerHour, MinBilling: 90 * m}
	for _, c := range []struct {
		name string
		pool policy.Pool
		life time.Duration
		want time.Duration
	}{
		{"per second below minimum", perSecond, 30 * s, 60 * s},
		{"per second just above minimum", perSecond, 61 * s, 61 * s},
		{"per second has no unit to round to", perSecond, 90*s + 500*time.Millisecond, 90*s + 500*time.Millisecond},
		{"per second zero life pays the minimum", perSecond, 0, 60 * s},
		{"per minute started minute", perMinute, 61 * s, 2 * m},
		// PaidUntil(start, start+1m) alone would say 2m: the second minute
		// has just begun for a worker still held at that instant.
		{"per minute exact minute", perMinute, 60 * s, 1 * m},
		{"per minute zero life is one started minute", perMinute, 0, 1 * m},
		{"per hour under minimum", perHour, 59 * m, 90 * m},
		{"per hour second hour rounds up", perHour, 91 * m, 2 * h},
		{"per hour exact hours", perHour, 2 * h, 2 * h},
		{"per hour just over", perHour, 2*h + time.Nanosecond, 3 * h},
	} {
		got := billedEnd(c.pool, t0, t0.Add(c.life)).Sub(t0)
		if got != c.want {
			t.Errorf("%s: %v billed as %v, want %v", c.name, c.life, got, c.want)
		}
	}
}
