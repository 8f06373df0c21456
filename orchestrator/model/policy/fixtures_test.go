package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// t0 is the "now" of the table tests.
var t0 = time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return t0.Add(-d) }

func fixedPool(name, region string) Pool {
	return Pool{Name: name, Kind: PoolFixed, Region: region, PricePerSlotHour: 0.5}
}

func elasticPool(name string, kind PoolKind, region string, price float64) Pool {
	return Pool{
		Name: name, Kind: kind, Region: region, PricePerSlotHour: price,
		Billing: BillingPerSecond, StartupDelay: 2 * time.Minute,
		MaxWorkers: 10, SlotsPerWorker: 4, IdleTTL: 10 * time.Minute,
	}
}

// worker is an up worker started an hour ago; busy slots beyond the job
// records stand for work the test does not name.
func worker(id, pool string, slots, busy int) Worker {
	w := Worker{ID: id, Pool: pool, Slots: slots, Busy: busy, State: WorkerUp, StartedAt: ago(time.Hour)}
	if busy == 0 {
		w.IdleSince = ago(time.Hour)
	}
	return w
}

// queued is a pending job; burst jobs are checkpointable and retryable
// (spot-eligible) unless the test says otherwise.
func queued(id string, class jobs.Class, q Queue, at time.Time) Job {
	return Job{
		ID: id, Class: class, State: jobs.StateQueued, Queue: q,
		Checkpointable: class == jobs.ClassBurst, Retryable: class == jobs.ClassBurst,
		SubmittedAt: at, QueuedAt: at,
	}
}

func running(id string, class jobs.Class, w Worker, started time.Time) Job {
	return Job{
		ID: id, Class: class, State: jobs.StateRunning, Queue: QueueBurst, Worker: w.ID, Pool: w.Pool,
		Checkpointable: class == jobs.ClassBurst, Retryable: class == jobs.ClassBurst,
		SubmittedAt: started, QueuedAt: started, StartedAt: started,
	}
}

// snap assembles a snapshot with the default config and makes each worker's
// Busy cover its job records, so tests only state the extra load.
func snap(pools []Pool, workers []Worker, js ...Job) Snapshot {
	s := Snapshot{Config: DefaultConfig(), Pools: pools, Workers: workers, Jobs: js}
	return fixBusy(s)
}

func fixBusy(s Snapshot) Snapshot {
	s.Workers = append([]Worker(nil), s.Workers...)
	count := map[string]int{}
	for _, j := range s.Jobs {
		if j.running() {
			count[j.Worker]++
		}
	}
	for i := range s.Workers {
		w := &s.Workers[i]
		if count[w.ID] > w.Busy {
			w.Busy = count[w.ID]
		}
		if w.Busy > 0 {
			w.IdleSince = time.Time{}
		}
	}
	return s
}

// summary renders a plan as "kind(args)" terms in plan order, without
// reasons: what table tests compare. Args are the job, the worker, the pool
// (ScaleUp and Overflow), the target queue of a Rehome and the count, when
// set.
func summary(p Plan) string {
	var parts []string
	for _, a := range p.Actions {
		var args []string
		for _, s := range []string{a.Job, a.Worker} {
			if s != "" {
				args = append(args, s)
			}
		}
		if a.Kind == ScaleUp || a.Kind == Overflow {
			args = append(args, a.Pool)
		}
		if a.Kind == Rehome {
			args = append(args, a.Home.String())
		}
		if a.Count != 0 {
			args = append(args, fmt.Sprint(a.Count))
		}
		parts = append(parts, fmt.Sprintf("%s(%s)", a.Kind, strings.Join(args, ",")))
	}
	return strings.Join(parts, " ")
}

// mustValid fails the test if the fixture itself is inconsistent.
func mustValid(t tb, s Snapshot) {
	t.Helper()
	if err := s.Validate(); err != nil {
		t.Fatalf("fixture is invalid: %v", err)
	}
}

// planCase is one table row: a snapshot, a time, and the expected summary.
type planCase struct {
	name string
	s    Snapshot
	now  time.Time
	want string
}

func runCases(t *testing.T, cases []planCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mustValid(t, c.s)
			now := c.now
			if now.IsZero() {
				now = t0
			}
			p := Decide(c.s, now)
			if got := summary(p); got != c.want {
				t.Errorf("plan\n got: %s\nwant: %s\n%s", got, c.want, p)
			}
		})
	}
}

// fixedWith returns a fixed pool "fx" in eu with one worker of n slots, busy busy.
func fixedWith(n, busy int) ([]Pool, []Worker) {
	return []Pool{fixedPool("fx", "eu")}, []Worker{worker("f1", "fx", n, busy)}
}
