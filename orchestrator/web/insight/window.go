package insight

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ballastdev/ballast/internal/timespan"
	"github.com/ballastdev/ballast/orchestrator/analysis/advisor"
	"github.com/ballastdev/ballast/orchestrator/analysis/planner"
	"github.com/ballastdev/ballast/orchestrator/model/cost"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/usage"
)

// Window gathers the advisor's view of [from, until): the waits of the
// attempts that started on elastic capacity (and of elastic work still
// waiting), the quota's idle samples, and each template's daily hours and
// the minimum demand from the finished jobs.
func (s Source) Window(ctx context.Context, from, until time.Time) (advisor.Window, error) {
	w := advisor.Window{From: from, Until: until, High: s.High, Low: s.Low, CoreOverflow: s.CoreOverflow, CoreMaxWait: s.CoreMaxWait}
	// Without prices the advisor says so and skips what needs them.
	w.Prices, _ = planner.PricesOf(s.Pools, 0)
	for _, n := range s.Quota {
		w.FixedSlots += n
	}
	active, err := s.Store.ActiveJobs(ctx)
	if err != nil {
		return w, err
	}
	attempts, err := s.Accounting.Usage(ctx, active, from, until)
	if err != nil {
		return w, err
	}
	w.ElasticWaits = s.elasticWaits(attempts, from, until)
	for _, j := range active {
		if j.State == jobs.StateQueued && queues.Queue(j.Queue).Elastic() && j.EligibleAt().Before(until) {
			w.ElasticWaits = append(w.ElasticWaits, advisor.Wait{At: until, Class: string(j.Spec.Class), Wait: until.Sub(j.EligibleAt())})
		}
	}
	samples, err := s.Accounting.Samples(ctx, advisor.SeriesFixedIdle, from, until)
	if err != nil {
		return w, err
	}
	for _, x := range samples {
		w.FixedIdle = append(w.FixedIdle, advisor.Sample{At: x.At, Value: x.Value})
	}
	var finished []jobs.Job
	err = s.Store.History(ctx, from, until, func(j jobs.Job) error {
		if j.State.Terminal() {
			finished = append(finished, j)
		}
		return nil
	})
	if err != nil {
		return w, err
	}
	// Hours a day are counted over the part of the window Ballast is known
	// to have run in (from its recorded start, or its first idle sample,
	// attempt or job), not the whole window: a controller started an hour
	// ago has not seen its templates idle for the other 23.
	started, err := s.Store.Started(ctx)
	if err != nil {
		return w, err
	}
	known := knownFrom(from, until, started, samples, attempts, finished)
	tr := trace.Trace{Name: "window", Start: known}
	for _, j := range finished {
		if tj, ok := trace.JobOf(j, tr.Start); ok {
			tr.Jobs = append(tr.Jobs, tj)
		}
	}
	if w.Teams, err = s.teamShares(ctx, from, until); err != nil {
		return w, err
	}
	w.Shapes, w.Pools, w.Quotas = shapesOf(tr, active, s.Pools), s.Pools, s.Quota
	w.History = tr
	if len(tr.Jobs) > 0 {
		trace.SortJobs(tr.Jobs)
		if h := planner.DemandCurve(tr, planner.DemandStep).Hourly(); len(h) > 0 {
			w.MinDemand = math.Inf(1)
			for _, v := range h {
				w.MinDemand = math.Min(w.MinDemand, v)
			}
		}
		// A template with less than a day of history is left alone by
		// the advisor (Days 0): hours a day need a day.
		w.Templates = advisor.TemplatesFrom(planner.Templates(tr, w.Prices), int(until.Sub(known)/(24*time.Hour)))
	}
	return w, nil
}

// shapesOf groups the window's finished jobs and every job still active
// by shape: a job that fits no machine never finishes, and is the one the
// advice is for.
func shapesOf(finished trace.Trace, active []jobs.Job, pools []policy.Pool) planner.Shapes {
	all := trace.Trace{Jobs: slices.Clone(finished.Jobs)}
	for _, j := range active {
		all.Jobs = append(all.Jobs, trace.Job{Slots: j.Spec.SlotCount(), Replicas: j.Spec.Members(), Requires: j.Spec.Requires,
			Class: j.Spec.Class, Checkpointable: j.Spec.Checkpointable})
	}
	return planner.ShapesOf(all, pools)
}

// Advise is the advisor's recommendations over [from, until).
func (s Source) Advise(ctx context.Context, from, until time.Time) (advisor.Window, []advisor.Recommendation, error) {
	w, err := s.Window(ctx, from, until)
	if err != nil {
		return w, nil, err
	}
	return w, advisor.Advise(w), nil
}

// knownFrom is the earliest sign in [from, until] that Ballast was running:
// its recorded start (zero when none is recorded), an idle sample, an
// attempt's wait or a job's creation.
func knownFrom(from, until, started time.Time, samples []usage.Sample, attempts []usage.AttemptUsage, finished []jobs.Job) time.Time {
	known := until
	if !started.IsZero() {
		known = timespan.Earlier(known, started)
	}
	for _, x := range samples {
		known = timespan.Earlier(known, x.At)
	}
	for _, u := range attempts {
		known = timespan.Earlier(known, u.Queued)
	}
	for _, j := range finished {
		known = timespan.Earlier(known, j.CreatedAt)
	}
	return timespan.Later(known, from)
}

// elasticWaits are the waits of the attempts that started on an elastic
// pool in [from, until]. A burst job on lent fixed capacity did not wait
// for elastic capacity and is not counted.
func (s Source) elasticWaits(attempts []usage.AttemptUsage, from, until time.Time) []advisor.Wait {
	var out []advisor.Wait
	for _, u := range attempts {
		if !s.elastic(u.Pool) || u.Start.Before(from) || u.Start.After(until) {
			continue
		}
		out = append(out, advisor.Wait{At: u.Start, Class: u.Class, Wait: u.Wait()})
	}
	return out
}

func (s Source) elastic(pool string) bool {
	p, ok := s.pool(pool)
	return ok && p.Kind != policy.PoolFixed
}

// teamShares is how each team with a share used it over [from, until),
// from the cost ledger (priced from Ballast's start, as the cost is); nil
// when shares are off.
func (s Source) teamShares(ctx context.Context, from, until time.Time) ([]advisor.TeamShare, error) {
	if !s.Shares.On() {
		return nil, nil
	}
	l, _, err := s.Ledger(ctx, from, until)
	if err != nil {
		return nil, err
	}
	uses, err := cost.FixedUse(l, s.Shares)
	if err != nil {
		return nil, fmt.Errorf("insight: the records of %s → %s cannot be swept for the shares: %v",
			from.Format(time.RFC3339), until.Format(time.RFC3339), err)
	}
	var out []advisor.TeamShare
	for _, u := range uses {
		if u.Share <= 0 || u.ShareSlotHours <= 0 {
			continue
		}
		out = append(out, advisor.TeamShare{Team: u.Team, Share: u.Share, OwnIdle: u.OwnIdle(),
			Lent: u.LentSlotHours / u.ShareSlotHours, Covered: l.Until.Sub(l.From), UsageP90: u.Quantile(0.9)})
	}
	return out, nil
}
