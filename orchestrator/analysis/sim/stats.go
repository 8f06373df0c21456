package sim

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
)

const day = 24 * time.Hour

// stats accumulates what a run measures. Times are summed as float hours:
// nanosecond integers would overflow on a large quota over months.
type stats struct {
	preempt        Preemptions
	lost, overhead float64
	slot           SlotHours
	done, misses   int
	decisions      int
	deaths         int // fixed worker deaths
	actions        map[policy.ActionKind]int
	paidElastic    int
	peakElastic    int
	templates      []templateStats
	templateIdx    map[string]int32
}

type templateStats struct {
	name  string
	jobs  int
	hours float64
	byDay []float64
}

func (st *stats) init() {
	st.actions = map[policy.ActionKind]int{}
	st.templateIdx = map[string]int32{}
}

// template returns the index of a template, counting one more job of it.
func (st *stats) template(name string) int32 {
	i, ok := st.templateIdx[name]
	if !ok {
		i = int32(len(st.templates))
		st.templateIdx[name] = i
		st.templates = append(st.templates, templateStats{name: name})
	}
	st.templates[i].jobs++
	return i
}

// jobDone records a job whose last slot has finished.
func (st *stats) jobDone(late bool) {
	st.done++
	if late {
		st.misses++
	}
}

// stopped records one stop and the work it threw away.
func (st *stats) stopped(r stopReason, lost time.Duration) {
	switch r {
	case stopReclaim:
		st.preempt.Reclaim++
	case stopMigrate:
		st.preempt.Migrate++
	case stopSpot:
		st.preempt.Spot++
	case stopLost:
		st.preempt.Lost++
	case stopRepack:
		st.preempt.Repack++
	}
	st.lost += lost.Hours()
}

// account charges the slot time of a task's attempt, from its start to
// until, to its pool, its pool's kind and its template, day by day; a
// gang's to each member's worker's pool.
func (s *sim) account(t *task, until time.Duration) {
	if t.share > 0 {
		// A share is billed and counted at its part of the GPU.
		s.accountOn(t, t.worker, t.gpus(), until)
		return
	}
	if !t.gang() {
		s.accountOn(t, t.worker, float64(t.slots), until)
		return
	}
	for i, wi := range t.gws {
		s.accountOn(t, wi, float64(t.gk[i]), until)
	}
}

// accountOn charges k slots of task t on worker wi from its start to until.
func (s *sim) accountOn(t *task, wi int32, k float64, until time.Duration) {
	from := t.startedAt
	p := &s.pools[s.workers[wi].pool]
	h := k * (until - from).Hours()
	p.use.SlotHours += h
	switch p.Kind {
	case policy.PoolFixed:
		s.st.slot.Fixed += h
	case policy.PoolOnDemand:
		s.st.slot.OnDemand += h
	case policy.PoolSpot:
		s.st.slot.Spot += h
	}
	tm := &s.st.templates[t.tmpl]
	tm.hours += h
	for from < until {
		d := int(from / day)
		if d >= len(tm.byDay) {
			tm.byDay = append(tm.byDay, make([]float64, d+1-len(tm.byDay))...)
		}
		seg := min(until, time.Duration(d+1)*day) - from
		tm.byDay[d] += k * seg.Hours()
		from += seg
	}
}

// result assembles the Result once the run is over. Elastic workers still
// up are billed to the end of the run, once however often it is called.
func (s *sim) result() Result {
	end := s.end
	if !s.settled {
		s.settled = true
		for _, wi := range s.live {
			s.bill(&s.workers[wi], end)
		}
	}
	r := Result{
		FixedSlots:         s.fixedSlots,
		Preemptions:        s.st.preempt,
		LostWork:           s.st.lost,
		OverheadSlotHours:  s.st.overhead,
		Jobs:               s.st.done,
		SlotHours:          s.st.slot,
		PeakElasticWorkers: s.st.peakElastic,
		SimulatedSeconds:   end.Seconds(),
		Decisions:          s.st.decisions,
		Actions:            maps.Clone(s.st.actions),
		DeadlineMisses:     s.st.misses,
		FixedDeaths:        s.st.deaths,
	}
	r.CoreWait, r.ElasticWait = s.classWaits()
	if s.bound != nil && s.bound.reason != "" {
		r.Stopped = s.bound.reason
		r.Unfinished += len(s.tr.Jobs) - s.next // never arrived: the run stopped first
	}
	for ji, left := range s.jobLeft {
		if left > 0 {
			r.Unfinished++
			if s.tr.Jobs[ji].Deadline > 0 {
				r.DeadlineMisses++
			}
		}
	}
	if len(s.quotas) > 0 {
		r.Cost.Fixed = s.chargeQuotas(end.Hours())
		if s.fixedSlots > 0 && end > 0 {
			r.FixedIdleShare = 1 - s.st.slot.Fixed/(float64(s.fixedSlots)*end.Hours())
		}
	}
	for i := range s.pools {
		p := &s.pools[i]
		switch p.Kind {
		case policy.PoolOnDemand:
			r.Cost.OnDemand += p.use.Cost
		case policy.PoolSpot:
			r.Cost.Spot += p.use.Cost
		}
		u := p.use
		u.Name, u.Kind, u.Labels = p.Name, p.Kind, p.Labels
		u.CoreWait, u.BurstWait = waitStats(p.waits.core), waitStats(p.waits.burst)
		r.Pools = append(r.Pools, u)
	}
	r.Cost.Total = r.Cost.Fixed + r.Cost.OnDemand + r.Cost.Spot

	days := int((end + day - 1) / day)
	for _, tm := range s.st.templates {
		u := TemplateUsage{Template: tm.name, Jobs: tm.jobs, SlotHours: tm.hours, ByDay: make([]float64, days)}
		copy(u.ByDay, tm.byDay)
		if end > 0 {
			u.SlotHoursPerDay = tm.hours / (end.Hours() / 24)
		}
		r.Templates = append(r.Templates, u)
	}
	slices.SortFunc(r.Templates, func(a, b TemplateUsage) int { return cmp.Compare(a.Template, b.Template) })
	if s.teams != nil {
		r.Teams = s.teams.results(s)
	}
	return r
}
