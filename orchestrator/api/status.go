package api

import (
	"context"

	"github.com/ballastdev/ballast/jobs"
	"github.com/ballastdev/ballast/queues"
)

// recentWindow is how many of the newest jobs the status counts by state.
const recentWindow = 1000

// CollectStatus reads workers, queue depths and recent job states.
func CollectStatus(ctx context.Context, store *queues.Store) (Status, error) {
	var st Status
	var err error
	if st.Leader, err = store.Leader(ctx); err != nil {
		return st, err
	}
	if st.Workers, err = store.Workers(ctx); err != nil {
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
	return st, nil
}
