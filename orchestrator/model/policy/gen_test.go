package policy

import (
	"fmt"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"pgregory.net/rapid"
)

// genSnapshot draws a valid snapshot around t0: up to two fixed pools and
// three elastic ones over three regions, workers in every state, running
// and queued jobs of both classes, moves and launches in flight.
func genSnapshot(t *rapid.T) Snapshot {
	minutes := func(label string, max int) time.Duration {
		return time.Duration(rapid.IntRange(0, max).Draw(t, label)) * time.Minute
	}
	high := rapid.IntRange(30, 100).Draw(t, "high")
	cfg := Config{
		High:               float64(high) / 100,
		Low:                float64(rapid.IntRange(0, high-1).Draw(t, "low")) / 100,
		SpotFallbackAfter:  rapid.SampledFrom([]time.Duration{0, 5 * time.Minute, 10 * time.Minute}).Draw(t, "fallback"),
		MaxSpotPreemptions: rapid.IntRange(0, 3).Draw(t, "max_preemptions"),
		CoreOverflow:       rapid.Bool().Draw(t, "overflow"),
		CoreMaxWait:        rapid.SampledFrom([]time.Duration{0, 10 * time.Minute, 30 * time.Minute}).Draw(t, "max_wait"),
		ReleaseMargin:      rapid.SampledFrom([]time.Duration{30 * time.Second, 2 * time.Minute, 5 * time.Minute}).Draw(t, "margin"),
	}
	regions := []string{"", "eu", "us"}
	region := func(label string) string { return rapid.SampledFrom(regions).Draw(t, label) }

	s := Snapshot{Config: cfg}
	// The loads cap how full workers are, so that snapshots span every regime.
	fixedLoad, elasticLoad := rapid.IntRange(0, 100).Draw(t, "fixed_load"), rapid.IntRange(0, 100).Draw(t, "elastic_load")
	var onDemand []string
	for i := range rapid.IntRange(0, 2).Draw(t, "fixed_pools") {
		s.Pools = append(s.Pools, Pool{Name: fmt.Sprintf("fx%d", i), Kind: PoolFixed, Region: region("fixed_region"), PricePerSlotHour: 0.5})
	}
	for i := range rapid.IntRange(0, 3).Draw(t, "elastic_pools") {
		p := Pool{
			Name:             fmt.Sprintf("el%d", i),
			Kind:             rapid.SampledFrom([]PoolKind{PoolOnDemand, PoolSpot}).Draw(t, "kind"),
			Region:           region("elastic_region"),
			PricePerSlotHour: float64(rapid.IntRange(1, 30).Draw(t, "price")) / 10,
			Billing:          rapid.SampledFrom([]Billing{BillingPerSecond, BillingPerMinute, BillingPerHour}).Draw(t, "billing"),
			MinBilling:       rapid.SampledFrom([]time.Duration{0, time.Minute, time.Hour}).Draw(t, "min_billing"),
			StartupDelay:     2 * time.Minute,
			MaxWorkers:       rapid.IntRange(0, 6).Draw(t, "max_workers"),
			SlotsPerWorker:   rapid.IntRange(1, 4).Draw(t, "slots_per_worker"),
			IdleTTL:          rapid.SampledFrom([]time.Duration{0, 5 * time.Minute, 10 * time.Minute}).Draw(t, "idle_ttl"),
		}
		if p.Kind == PoolOnDemand {
			onDemand = append(onDemand, p.Name)
		}
		s.Pools = append(s.Pools, p)
	}

	nextJob := 0
	newJob := func(class jobs.Class, state jobs.State) Job {
		nextJob++
		j := Job{
			ID: fmt.Sprintf("j%03d", nextJob), Class: class, State: state,
			Checkpointable:  rapid.Bool().Draw(t, "checkpointable"),
			Retryable:       rapid.Bool().Draw(t, "retryable"),
			SpotPreemptions: rapid.IntRange(0, 4).Draw(t, "preemptions"),
			QueuedAt:        t0.Add(-minutes("queued_ago", 120)),
		}
		if rapid.IntRange(0, 3).Draw(t, "pinned") == 0 {
			j.Region = rapid.SampledFrom(regions[1:]).Draw(t, "job_region")
		}
		j.SubmittedAt = j.QueuedAt.Add(-minutes("submitted_before", 10))
		// Some queued jobs went back after they ran: their queue order is
		// by submission, ahead of the rest.
		j.Readmitted = state == jobs.StateQueued && rapid.IntRange(0, 3).Draw(t, "readmitted") == 0
		if class == jobs.ClassCore && rapid.IntRange(0, 2).Draw(t, "own_wait") == 0 {
			// A template's, step's or deadline's own wait (rule 7).
			j.MaxWait, j.HasMaxWait = rapid.SampledFrom([]time.Duration{0, 5 * time.Minute, time.Hour}).Draw(t, "own_max_wait"), true
		}
		return j
	}
	for _, p := range s.Pools {
		for i := range rapid.IntRange(0, 3).Draw(t, "workers") {
			w := Worker{
				ID: fmt.Sprintf("%s-w%d", p.Name, i), Pool: p.Name,
				State:     rapid.SampledFrom([]WorkerState{WorkerUp, WorkerUp, WorkerDraining, WorkerStarting}).Draw(t, "state"),
				StartedAt: t0.Add(-minutes("started_ago", 180)),
			}
			w.LaunchRequestedAt = w.StartedAt.Add(-time.Minute)
			if p.Kind == PoolFixed {
				w.Slots = rapid.IntRange(1, 16).Draw(t, "fixed_slots")
			} else {
				w.Slots = p.SlotsPerWorker
			}
			if w.State != WorkerStarting {
				load := elasticLoad
				if p.Kind == PoolFixed {
					load = fixedLoad
				}
				for range rapid.IntRange(0, (w.Slots*load+99)/100).Draw(t, "running") {
					class := jobs.ClassBurst
					if p.Kind != PoolSpot && rapid.Bool().Draw(t, "core") {
						class = jobs.ClassCore
					}
					j := newJob(class, jobs.StateRunning)
					j.Queue, j.Worker, j.Pool = QueueBurst, w.ID, p.Name
					if class == jobs.ClassCore {
						j.Queue = QueueCore
					}
					j.StartedAt = t0.Add(-minutes("run_for", 120))
					if rapid.IntRange(0, 3).Draw(t, "running_shared") == 0 {
						// The worker reports the GPU busy: one share to a
						// GPU here, so its busy count stays one a job.
						j.Share = rapid.SampledFrom([]int{250, 400, 500, 600, 900}).Draw(t, "running_share")
					}
					if j.Checkpointable && rapid.Bool().Draw(t, "checkpointed") {
						j.LastCheckpointAt = j.StartedAt.Add(minutes("checkpoint_after", 60))
					}
					if rapid.IntRange(0, 4).Draw(t, "in_flight") == 0 {
						switch {
						case p.Kind == PoolFixed && class == jobs.ClassBurst:
							j.PendingAction = Reclaim
						case p.Kind.Elastic() && j.Checkpointable && class == jobs.ClassBurst && rapid.Bool().Draw(t, "repacking"):
							j.PendingAction = Repack
						case p.Kind.Elastic() && j.Checkpointable:
							j.PendingAction = Migrate
						}
					}
					s.Jobs = append(s.Jobs, j)
					w.Busy++
				}
				if rapid.IntRange(0, 3).Draw(t, "has_unnamed") == 0 {
					w.Busy += rapid.IntRange(0, w.Slots-w.Busy).Draw(t, "unnamed_busy")
				}
			}
			if w.Busy == 0 && rapid.IntRange(0, 4).Draw(t, "idle_known") > 0 {
				w.IdleSince = t0.Add(-minutes("idle_for", 120))
			}
			s.Workers = append(s.Workers, w)
		}
	}
	// Few queued core jobs, so that lending and migration get their turn.
	nCore := rapid.IntRange(0, 4).Draw(t, "queued_core")
	nBurst := rapid.IntRange(0, rapid.SampledFrom([]int{0, 3, 20}).Draw(t, "burst_scale")).Draw(t, "queued_burst")
	for i := range nCore + nBurst {
		class := jobs.ClassBurst
		if i < nCore {
			class = jobs.ClassCore
		}
		j := newJob(class, jobs.StateQueued)
		if rapid.IntRange(0, 3).Draw(t, "shared") == 0 {
			// A share of one GPU: shares pack, so every count of queued
			// work must add them up as the next tick's index does.
			j.Share = rapid.SampledFrom([]int{250, 400, 500, 600, 900}).Draw(t, "share")
		}
		inFlight := rapid.IntRange(0, 4).Draw(t, "in_flight") == 0
		switch {
		case class == jobs.ClassCore && len(onDemand) > 0 && rapid.IntRange(0, 4).Draw(t, "overflowed") == 0:
			j.Queue, j.Pool = QueueOverflow, rapid.SampledFrom(onDemand).Draw(t, "overflow_pool")
		case class == jobs.ClassCore:
			j.Queue = QueueCore
			if inFlight && len(onDemand) > 0 {
				j.PendingAction, j.Pool = Overflow, rapid.SampledFrom(onDemand).Draw(t, "overflow_pool")
			}
		default:
			j.Queue = rapid.SampledFrom([]Queue{QueueBurst, QueueBurst, QueueLoan}).Draw(t, "queue")
			// Half the elastic backlog says which elastic queue it waits
			// in, as the controller's does; the rest, as the simulator's,
			// does not.
			if j.Queue == QueueBurst && rapid.Bool().Draw(t, "home_known") {
				j.Home = ElasticHome{Known: true, OnDemand: rapid.Bool().Draw(t, "home_ondemand"), Region: region("home_region")}
			}
			if inFlight {
				j.PendingAction = map[Queue]ActionKind{QueueBurst: Lend, QueueLoan: Unlend}[j.Queue]
				if j.Home.Known && rapid.Bool().Draw(t, "rehoming") {
					j.PendingAction = Rehome
				}
			}
		}
		s.Jobs = append(s.Jobs, j)
	}
	for _, p := range s.Pools {
		if !p.Kind.Elastic() {
			continue
		}
		for range rapid.IntRange(0, 2).Draw(t, "launches") {
			s.Launches = append(s.Launches, Launch{Pool: p.Name, Count: rapid.IntRange(1, 3).Draw(t, "count"), RequestedAt: t0.Add(-minutes("launched_ago", 20))})
		}
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("the generator made an invalid snapshot: %v", err)
	}
	return s
}
