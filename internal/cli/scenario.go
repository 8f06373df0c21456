package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/web/api"
	"github.com/ballastdev/ballast/orchestrator/web/insight"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/leader"
	"github.com/ballastdev/ballast/queues/redisinfo"
	"github.com/ballastdev/ballast/queues/registry"
)

// runScenario plays the hybrid demo load: a burst spike (the policy lends
// what fits under the high watermark and starts spot and on-demand workers
// for the rest), then a wave of core work larger than the free fixed slots
// (borrowed burst work is reclaimed), then quiet (elastic workers go idle and
// are released). A one-line summary of capacity is printed every 2 seconds
// until the elastic workers are gone again.
func runScenario(ctx context.Context, e *env, nc *nats.Conn, cfg config.Config, store *queues.Store) {
	c := client.NewNATS(nc, subjects(cfg))
	say := func(format string, args ...any) {
		fmt.Fprintf(e.out, "%s  scenario: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}
	elastic := map[string]bool{}
	for name, p := range cfg.Pools {
		elastic[name] = p.Kind.Elastic()
	}
	tally := newScenarioTally(say, elastic)
	if _, err := nc.Subscribe(subjects(cfg).All(), func(m *nats.Msg) {
		var ev events.Event
		if json.Unmarshal(m.Data, &ev) == nil {
			tally.observe(ev)
		}
	}); err != nil {
		say("cannot watch events (%v): phases and the summary will be missing", err)
	}
	began := time.Now()
	submit := func(s jobs.Submission) {
		if _, err := c.Submit(ctx, s); err != nil {
			say("submit failed: %v", err)
		}
	}
	go func() {
		say("burst spike: 8 checkpointing jobs (40 steps of 250ms)")
		for i := 0; i < 8; i++ {
			submit(jobs.Submission{Template: "steps", Params: raw(map[string]any{"steps": 40, "step_time": "250ms"})})
		}
		if !sleepCtx(ctx, 6*time.Second) {
			return
		}
		say("core wave: 3 core jobs of 8s, more than the free fixed slots: borrowed burst work is reclaimed")
		for i := 0; i < 3; i++ {
			submit(jobs.Submission{Template: "sleep", Class: string(jobs.ClassCore), Params: raw(map[string]any{"seconds": 8})})
		}
		seenElastic, peak := false, 0
		for sleepCtx(ctx, 2*time.Second) {
			st, err := api.CollectStatus(ctx, store, registry.New(store), leader.New(store), redisinfo.New(store))
			if err != nil {
				say("status: %v", err)
				continue
			}
			line, elastic := summary(st, cfg)
			fmt.Fprintf(e.out, "%s  %s\n", time.Now().Format("15:04:05"), line)
			seenElastic = seenElastic || elastic > 0
			peak = max(peak, elastic)
			if elastic < peak {
				tally.drained(elastic)
			}
			if seenElastic && elastic == 0 && st.Counts[jobs.StateRunning] == 0 && st.Counts[jobs.StateQueued] == 0 {
				say("done: the spike is served, borrowed work went back, elastic capacity drained to zero")
				say("%s", tally.summary(scenarioCost(ctx, store, cfg, began)))
				return
			}
		}
	}()
}

// scenarioCost is what the demo's span cost, as `ballast cost` prices it,
// or "" when it cannot be read.
func scenarioCost(ctx context.Context, store *queues.Store, cfg config.Config, from time.Time) string {
	rep, _, err := insightSource(store, cfg).Cost(ctx, from, time.Now())
	if err != nil {
		return ""
	}
	v := insight.CostViewOf(rep)
	return fmt.Sprintf("paid %.4f (fixed %.4f, elastic %.4f)", v.Total, v.Fixed, v.Elastic)
}

// summary renders fixed utilization, elastic workers per pool, and queue depths.
func summary(st api.Status, cfg config.Config) (string, int) {
	busy, slots, elastic := 0, 0, 0
	perPool := map[string]int{}
	for _, w := range st.Workers {
		p := cfg.Pools[w.Pool]
		if p.Kind.Elastic() {
			elastic++
			perPool[w.Pool]++
			continue
		}
		busy += w.Busy
		slots += w.Slots
	}
	util := 0.0
	if slots > 0 {
		util = float64(busy) / float64(slots)
	}
	var pools []string
	for name, n := range perPool {
		pools = append(pools, fmt.Sprintf("%s %d", name, n))
	}
	sort.Strings(pools)
	var qs []string
	for _, q := range st.Queues {
		qs = append(qs, fmt.Sprintf("%s %d", q.Queue, q.Pending+q.Scheduled))
	}
	el := "none"
	if len(pools) > 0 {
		el = strings.Join(pools, ", ")
	}
	return fmt.Sprintf("fixed %d/%d busy (%.2f) | elastic workers: %s | waiting: %s | running %d",
		busy, slots, util, el, strings.Join(qs, ", "), st.Counts[jobs.StateRunning]), elastic
}

// sleepCtx sleeps for d unless ctx ends first; it reports whether it slept.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
