package insight

import (
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
	"github.com/ballastdev/ballast/queues"
)

// sharesView is the teams' use of their shares now, from the job records
// (the same records the running table shows), counted as the leader's
// share metrics count it; nil with shares off.
func (s Source) sharesView(now time.Time, in Inputs) *shares.View {
	if !s.Shares.On() {
		return nil
	}
	quota := 0
	for _, n := range s.Quota {
		quota += n
	}
	fixedWorker := map[string]bool{}
	for _, w := range in.Workers {
		if p, ok := s.pool(w.Pool); ok && p.Kind == policy.PoolFixed {
			fixedWorker[w.ID] = true
		}
	}
	used := map[string]float64{}
	waits := map[string]shares.Wait{}
	for _, j := range in.Active {
		team := j.Spec.Team
		if team == "" {
			continue
		}
		q := queues.Queue(j.Queue)
		switch {
		case j.State == jobs.StateRunning && fixedWorker[j.Worker]:
			used[team] += float64(j.Spec.SlotCount() * j.Spec.Members())
		case j.State == jobs.StateQueued && j.Spec.Class == jobs.ClassCore && (q == queues.QueueHeld || q == queues.QueueCore):
			w := waits[team]
			w.Add(j.QueuedAt)
			waits[team] = w
		}
	}
	v := s.Shares.ViewOf(now, quota, used, waits)
	return &v
}
