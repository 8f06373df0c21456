package insight

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/ballastdev/ballast/internal/timespan"
	"github.com/ballastdev/ballast/orchestrator/analysis/advisor"
	"github.com/ballastdev/ballast/orchestrator/control/telemetry"
	"github.com/ballastdev/ballast/orchestrator/model/cost"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/redisinfo"
	"github.com/ballastdev/ballast/queues/usage"
)

// Inputs are the store's records an Overview is built from.
type Inputs struct {
	Leader  string
	Workers []queues.WorkerInfo
	Queues  []queues.QueueStats
	// Active are the queued and running jobs.
	Active []jobs.Job
	// Usage and Lives cover at least today and the series window.
	Usage []usage.AttemptUsage
	Lives []usage.WorkerLife
	// IdleSamples are the quota's idle share samples of the series window.
	IdleSamples []usage.Sample
	// Started is when Ballast started (Store.Started): today's cost is
	// priced from it when it is later than midnight.
	Started time.Time
	// Topology is the Redis topology the store runs on now.
	Topology redisinfo.Topology
	// DataLoss is the recorded, unrecovered loss of Redis data (nil: none).
	DataLoss *queues.DataLoss
}

// readCurrent reads what the overview shows as it is now: cheap reads,
// done on every refresh.
func (s Source) readCurrent(ctx context.Context, in *Inputs) error {
	var err error
	if in.Leader, err = s.lease().Holder(ctx); err != nil {
		return err
	}
	if in.Workers, err = s.workers().Workers(ctx); err != nil {
		return err
	}
	if in.Queues, err = s.Store.QueueStats(ctx); err != nil {
		return err
	}
	in.Topology = s.redis().Topology(ctx)
	if _, in.DataLoss, err = s.Store.ReadEpoch(ctx); err != nil {
		return err
	}
	in.Active, err = s.Store.ActiveJobs(ctx)
	return err
}

// readPast reads the history behind the key measures and today's cost: a
// day of usage records, which Live reads at a slower pace. It follows
// readCurrent, whose active jobs it reuses.
func (s Source) readPast(ctx context.Context, now time.Time, in *Inputs) error {
	var err error
	from := timespan.Earlier(s.DayStart(now), now.Add(-s.seriesWindow()))
	// The active jobs were read just before, by readCurrent.
	if in.Usage, err = s.Accounting.Usage(ctx, in.Active, from, now); err != nil {
		return err
	}
	if in.Lives, err = s.Accounting.WorkerLives(ctx, from, now); err != nil {
		return err
	}
	if in.Started, err = s.Store.Started(ctx); err != nil {
		return err
	}
	in.IdleSamples, err = s.Accounting.Samples(ctx, advisor.SeriesFixedIdle, now.Add(-s.seriesWindow()), now)
	return err
}

// OverviewOf builds the overview at now from records already read.
func (s Source) OverviewOf(now time.Time, in Inputs) Overview {
	o, idleNow := s.current(now, in)
	o.Key, o.Cost, o.Problems = s.past(now, in)
	o.Key.FixedIdleNow = idleNow
	o.Span = s.span().Name
	return o
}

// current builds the parts of the overview that describe now, and the
// quota's idle share now. Busy slots come from the job records, not the
// workers' last heartbeats: they are fresher, and they are what the
// running-jobs table shows, so the pools and the jobs never disagree.
func (s Source) current(now time.Time, in Inputs) (Overview, *float64) {
	o := Overview{At: now, Leader: in.Leader, Redis: in.Topology, Engines: s.engines(), Pools: []PoolView{}, Workers: []WorkerView{}, Queues: []QueueView{},
		Running: []RunningJob{}, Recommendations: []advisor.Recommendation{}, DataLoss: in.DataLoss}
	running := map[string]int{}
	runningByQueue := map[string]int{}
	for _, j := range in.Active {
		if queues.Overflowed(j) {
			o.Overflowed++
		}
		if j.State == jobs.StateRunning {
			running[j.Worker]++
			runningByQueue[j.Queue]++
			o.Running = append(o.Running, s.runningJob(now, j))
		}
	}
	slices.SortFunc(o.Running, func(a, b RunningJob) int { return cmp.Or(a.Started.Compare(b.Started), cmp.Compare(a.ID, b.ID)) })

	ws := slices.Clone(in.Workers)
	for i := range ws {
		ws[i].Busy = min(running[ws[i].ID], ws[i].Slots)
	}
	snap := telemetry.SnapshotOf(now, in.Queues, ws, s.Pools, s.Quota)
	for _, ps := range snap.Pools {
		p, _ := s.pool(ps.Pool)
		o.Pools = append(o.Pools, PoolView{Name: p.Name, Kind: string(p.Kind), PricePerSlotHour: p.PricePerSlotHour,
			Quota: s.Quota[p.Name], Busy: ps.Busy, Idle: ps.Idle, Workers: ps.Workers[telemetry.WorkerUp] + ps.Workers[telemetry.WorkerDraining],
			Draining: ps.Workers[telemetry.WorkerDraining], CostPerHour: snap.CostPerHourByPool[p.Name]})
	}
	for _, w := range ws {
		o.Workers = append(o.Workers, s.workerView(now, w))
	}
	slices.SortFunc(o.Workers, func(a, b WorkerView) int { return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.ID, b.ID)) })
	for _, q := range in.Queues {
		o.Queues = append(o.Queues, QueueView{Name: string(q.Queue), Pending: q.Pending + q.Scheduled,
			Running: runningByQueue[string(q.Queue)], OldestSeconds: q.OldestPendingSeconds})
	}
	o.Shares = s.sharesView(now, in)
	if math.IsNaN(snap.FixedIdleRatio) {
		return o, nil
	}
	idle := snap.FixedIdleRatio
	return o, &idle
}

// past builds the key measures over time and today's cost from the usage
// records, with what could not be priced.
func (s Source) past(now time.Time, in Inputs) (KeyMetrics, CostView, []string) {
	key := s.keyMetrics(now, in)
	l, problems := s.LedgerOf(s.DayStart(now), now, in.Started, in.Usage, in.Lives)
	r, err := cost.Compute(l)
	if err != nil {
		return key, CostView{From: l.From, Until: l.Until, Pools: []PoolCost{}, Teams: []NamedCost{}},
			append(problems, "today's cost: "+err.Error())
	}
	return key, CostViewOf(r), problems
}

func (s Source) runningJob(now time.Time, j jobs.Job) RunningJob {
	r := RunningJob{ID: j.ID, Template: j.Spec.Template, Team: j.Spec.Team, Class: string(j.Spec.Class), Queue: j.Queue,
		Pool: j.Pool, Worker: j.Worker, Attempt: j.Attempt, Runs: j.Runs, Started: j.StartedAt,
		WaitSeconds: j.StartedAt.Sub(j.EligibleAt()).Seconds(), RunSeconds: max(0, now.Sub(j.StartedAt).Seconds()),
		Overflowed: queues.Overflowed(j)}
	if p, ok := s.pool(j.Pool); ok {
		r.Cost = r.RunSeconds / 3600 * p.PricePerSlotHour
	}
	return r
}

func (s Source) workerView(now time.Time, w queues.WorkerInfo) WorkerView {
	v := WorkerView{ID: w.ID, Pool: w.Pool, Slots: w.Slots, Busy: w.Busy, State: telemetry.WorkerUp,
		Started: w.StartedAt, AgeSeconds: max(0, now.Sub(w.StartedAt).Seconds()), Isolation: w.Isolation,
		Labels: w.Labels, GPUs: w.GPUs}
	if w.Draining {
		v.State = telemetry.WorkerDraining
	}
	if p, ok := s.pool(w.Pool); ok {
		v.Kind = string(p.Kind)
		from := w.BilledFrom
		if from.IsZero() {
			from = w.StartedAt
		}
		if p.Kind != policy.PoolFixed && !from.IsZero() {
			v.BilledCost = p.PaidUntil(from, now).Sub(from).Hours() * float64(w.Slots) * p.PricePerSlotHour
		}
	}
	return v
}

// preempted says whether an attempt's outcome counts as a preemption: it
// was stopped to run elsewhere, by the controller, a drain, or the loss
// of its worker.
func preempted(outcome string) bool {
	return outcome == "preempted" || outcome == "requeued" || outcome == "lost"
}

func (s Source) keyMetrics(now time.Time, in Inputs) KeyMetrics {
	recent, step, window := s.recent(), s.seriesStep(), s.seriesWindow()
	k := KeyMetrics{RecentSeconds: recent.Seconds(), PreemptionsByKind: map[string]int{}, Series: []KeyBucket{}}
	first := now.Add(-window).Truncate(step)
	n := int(now.Sub(first)/step) + 1
	buckets := make([]KeyBucket, n)
	waits := make([][]time.Duration, n)
	idle := make([][]float64, n)
	for i := range buckets {
		buckets[i].From = first.Add(time.Duration(i) * step)
	}
	bucket := func(t time.Time) int {
		if t.Before(first) || t.After(now) {
			return -1
		}
		return int(t.Sub(first) / step)
	}
	var recentWaits []time.Duration
	for _, u := range in.Usage {
		if s.elastic(u.Pool) {
			if i := bucket(u.Start); i >= 0 {
				waits[i] = append(waits[i], u.Wait())
			}
			if !u.Start.Before(now.Add(-recent)) && !u.Start.After(now) {
				recentWaits = append(recentWaits, u.Wait())
			}
		}
		if !u.End.IsZero() && preempted(u.Outcome) {
			if i := bucket(u.End); i >= 0 {
				buckets[i].Preemptions++
			}
			if !u.End.Before(now.Add(-recent)) && !u.End.After(now) {
				k.Preemptions++
				k.PreemptionsByKind[u.Outcome]++
			}
		}
	}
	var recentIdle []float64
	for _, x := range in.IdleSamples {
		if i := bucket(x.At); i >= 0 {
			idle[i] = append(idle[i], x.Value)
		}
		if !x.At.Before(now.Add(-recent)) && !x.At.After(now) {
			recentIdle = append(recentIdle, x.Value)
		}
	}
	k.ElasticStarts, k.ElasticWaitP95Seconds = len(recentWaits), p95Seconds(recentWaits)
	k.FixedIdleMean = mean(recentIdle)
	for i := range buckets {
		buckets[i].ElasticStarts, buckets[i].ElasticWaitP95Seconds = len(waits[i]), p95Seconds(waits[i])
		buckets[i].FixedIdle = mean(idle[i])
		buckets[i].NoData = !in.Started.IsZero() && !buckets[i].From.Add(step).After(in.Started)
	}
	k.Series = buckets
	return k
}

func p95Seconds(ds []time.Duration) float64 {
	slices.Sort(ds)
	return advisor.P95(ds).Seconds()
}

func mean(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	m := sum / float64(len(xs))
	return &m
}

// DayStart is the midnight that starts now's day in the cost time zone.
func (s Source) DayStart(now time.Time) time.Time {
	t := now.In(s.loc())
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, s.loc())
}

func (s Source) recent() time.Duration       { return orDefault(s.Recent, DefaultRecent) }
func (s Source) seriesStep() time.Duration   { return orDefault(s.SeriesStep, DefaultSeriesStep) }
func (s Source) seriesWindow() time.Duration { return orDefault(s.SeriesWindow, DefaultSeriesWindow) }
func (s Source) adviceWindow() time.Duration { return orDefault(s.AdviceWindow, DefaultAdviceWindow) }
