package e2e

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestHybridLeaderFailover: two controllers with the capacity policy share a
// namespace; only the leader plans. When it stops, the standby takes over
// within a lease plus a tick, and its plans take effect: a burst job
// submitted after the handover is lent to the idle fixed worker.
func TestHybridLeaderFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the ballast binary")
	}
	r := newHybridRig(t, map[string]config.PoolConfig{
		"fixed": {Kind: config.PoolFixed, Slots: 2, PricePerSlotHour: 1},
	}, 0.7, 0.4)
	fixed := r.startFixedWorker("fixed-1", 2)
	h1, h2 := r.capacity(nil), r.capacity(nil)
	c1 := r.startController("ctl-1", h1)
	c2 := r.startController("ctl-2", h2)

	var leader, standby *controller.Controller
	var standbyH *controller.Hybrid
	testenv.Eventually(t, 5*time.Second, "exactly one leader", func() bool {
		switch l1, l2 := c1.Leader(), c2.Leader(); {
		case l1 && l2:
			t.Fatalf("both controllers lead")
		case l1:
			leader, standby, standbyH = c1, c2, h2
		case l2:
			leader, standby, standbyH = c2, c1, h1
		default:
			return false
		}
		return true
	})

	// The leader plans: a burst job is lent and runs on the fixed worker.
	first := r.submitSleep("burst-before", jobs.ClassBurst, 0.2)
	testenv.Eventually(t, 10*time.Second, "the first burst job lent and done on the fixed worker", func() bool {
		j := r.job(first)
		r.mustNotFail(j)
		return j.State == jobs.StateSucceeded
	})
	if j := r.job(first); j.Worker != fixed.ID() || j.Queue != string(queues.QueueLoan) {
		t.Errorf("first burst job ran on %q from %s, want the fixed worker from loan", j.Worker, j.Queue)
	}
	if standby.Leader() {
		t.Fatalf("the standby took the lead while the leader was up")
	}
	if n := len(standbyH.LastPlan().Actions); n != 0 {
		t.Errorf("the standby planned %d actions while not leading: %v", n, standbyH.LastPlan().Actions)
	}

	stopped := time.Now()
	leader.Stop()
	testenv.Eventually(t, hyLeaderTTL+2*hyTick+time.Second, "the standby leading", standby.Leader)
	handover := time.Since(stopped)
	t.Logf("leader handover (stop -> standby leads): %s (leader_ttl %s, tick %s)", handover.Round(time.Millisecond), hyLeaderTTL, hyTick)
	if handover > hyLeaderTTL+hyTick+100*time.Millisecond {
		t.Errorf("handover took %s, want within leader_ttl + tick (%s)", handover, hyLeaderTTL+hyTick)
	}

	// Only the new leader can lend now.
	second := r.submitSleep("burst-after", jobs.ClassBurst, 0.2)
	testenv.Eventually(t, 10*time.Second, "the second burst job lent and done on the fixed worker", func() bool {
		j := r.job(second)
		r.mustNotFail(j)
		return j.State == jobs.StateSucceeded
	})
	if j := r.job(second); j.Worker != fixed.ID() || j.Queue != string(queues.QueueLoan) {
		t.Errorf("second burst job ran on %q from %s, want the fixed worker from loan", j.Worker, j.Queue)
	}
}
