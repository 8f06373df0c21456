package api

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// recentWindow is how many of the newest jobs the status counts by state.
const recentWindow = 1000

// CollectStatus reads the leader of lease, the workers of reg, of store
// the queue depths, recent job states and the jobs overflowed to
// on-demand capacity, and of rs whether Redis keeps accepted jobs and
// its topology.
func CollectStatus(ctx context.Context, store StatusReader, reg WorkerLister, lease LeaseHolder, rs RedisReader) (Status, error) {
	var st Status
	var err error
	if st.Leader, err = lease.Holder(ctx); err != nil {
		return st, err
	}
	if st.Workers, err = reg.Workers(ctx); err != nil {
		return st, err
	}
	if st.Queues, err = store.QueueStats(ctx); err != nil {
		return st, err
	}
	recent, err := store.List(ctx, queues.ListOptions{Limit: recentWindow})
	if err != nil {
		return st, err
	}
	st.Counts = map[jobs.State]int{}
	for _, j := range recent {
		st.Counts[j.State]++
	}
	st.Recent = len(recent)
	active, err := store.ActiveJobs(ctx)
	if err != nil {
		return st, err
	}
	st.Overflowed = overflowedOf(active, time.Now())
	if st.Epoch, st.DataLoss, err = store.ReadEpoch(ctx); err != nil {
		return st, err
	}
	st.Redis = rs.CheckDurability(ctx)
	st.Topology = rs.Topology(ctx)
	return st, nil
}

// overflowedOf picks the overflowed jobs of active, oldest queued first.
func overflowedOf(active []jobs.Job, now time.Time) []OverflowedJob {
	out := []OverflowedJob{}
	for _, j := range active {
		if !queues.Overflowed(j) {
			continue
		}
		until := now
		if j.State == jobs.StateRunning {
			until = j.StartedAt
		}
		out = append(out, OverflowedJob{ID: j.ID, Template: j.Spec.Template, Team: j.Spec.Team, State: j.State,
			Queue: j.Queue, Pool: j.Pool, Worker: j.Worker, WaitedSeconds: max(until.Sub(j.QueuedAt), 0).Seconds()})
	}
	slices.SortFunc(out, func(a, b OverflowedJob) int { return cmp.Compare(b.WaitedSeconds, a.WaitedSeconds) })
	return out
}
