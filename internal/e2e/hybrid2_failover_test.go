package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/config"
	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/leader"
)

// startBallast starts `ballast ARGS...` as a child writing to name.log in
// the rig's directory; at cleanup it is sent SIGTERM, then SIGKILL.
func (r *hybridRig) startBallast(name string, args ...string) *child {
	r.t.Helper()
	return startChild(r.t, r.bin, filepath.Join(r.dir, name+".log"), args...)
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (r *hybridRig) leader() string {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	l, err := leader.New(r.store).Holder(ctx)
	if err != nil {
		r.t.Fatalf("leader.Holder: %v", err)
	}
	return l
}

// TestHybrid2LeaderCrashFailover: two `ballast controller` processes share a
// namespace. The leader is SIGKILLed (no resignation); the standby takes
// the lease within leader_ttl plus two ticks, and jobs keep flowing: a core
// job submitted over NATS after the crash runs on the fixed worker, and a
// burst job is lent to it by the new leader's policy.
func TestHybrid2LeaderCrashFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ballast binary")
	}
	r := newHybridRig(t, map[string]config.PoolConfig{
		"fixed": {Kind: config.PoolFixed, Slots: 2, PricePerSlotHour: 1},
	}, 0.7, 0.4)
	fixed := r.startFixedWorker("fixed-1", 2)
	ctls := []*child{
		r.startBallast("ctl-a", "controller", "--config", r.cfgPath, "--provider", "none"),
		r.startBallast("ctl-b", "controller", "--config", r.cfgPath, "--provider", "none"),
	}
	idOf := func(c *child) string { return "-" + strconv.Itoa(c.cmd.Process.Pid) }
	testenv.Eventually(t, 10*time.Second, "both controllers serving", func() bool {
		for _, c := range ctls {
			if c.exited() {
				t.Fatalf("a controller exited:\n%s", c.log())
			}
			if !strings.Contains(c.log(), "controller running") {
				return false
			}
		}
		return true
	})
	var leader, standby *child
	testenv.Eventually(t, 5*time.Second, "one of the two controllers leading", func() bool {
		l := r.leader()
		for i, c := range ctls {
			if l != "" && strings.HasSuffix(l, idOf(c)) {
				leader, standby = c, ctls[1-i]
				return true
			}
		}
		return false
	})
	oldLeader := r.leader()

	nc := client.NewNATS(r.nc, r.subj)
	submit := func(s jobs.Submission) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		rc, err := nc.Submit(ctx, s)
		if err != nil {
			t.Fatalf("submit %s over NATS: %v", s.IdempotencyKey, err)
		}
		return rc.JobID
	}
	before := submit(coreSleep("core-before"))
	testenv.Eventually(t, 10*time.Second, "the core job before the crash done", func() bool {
		j := r.job(before)
		r.mustNotFail(j)
		return j.State == jobs.StateSucceeded
	})

	killed := time.Now()
	if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL the leader: %v", err)
	}
	var newLeader string
	testenv.Eventually(t, hyLeaderTTL+2*hyTick+2*time.Second, "the standby leading", func() bool {
		newLeader = r.leader()
		return strings.HasSuffix(newLeader, idOf(standby))
	})
	handover := time.Since(killed)
	t.Logf("leader crash handover (SIGKILL %s -> %s leads): %s (leader_ttl %s, tick %s)",
		oldLeader, newLeader, handover.Round(time.Millisecond), hyLeaderTTL, hyTick)
	if handover > hyLeaderTTL+2*hyTick {
		t.Errorf("handover took %s, want within leader_ttl + 2 ticks (%s)", handover, hyLeaderTTL+2*hyTick)
	}
	select {
	case <-leader.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("the SIGKILLed leader did not exit")
	}

	after := submit(coreSleep("core-after"))
	rec, _ := json.Marshal(filepath.Join(r.dir, "burst-after.record"))
	burst := submit(jobs.Submission{Template: "hy-steps", IdempotencyKey: "burst-after",
		Params: map[string]json.RawMessage{"steps": json.RawMessage("3"), "record": rec}})
	testenv.Eventually(t, 15*time.Second, "the jobs submitted after the crash done", func() bool {
		for _, id := range []string{after, burst} {
			j := r.job(id)
			r.mustNotFail(j)
			if j.State != jobs.StateSucceeded {
				return false
			}
		}
		return true
	})
	t.Logf("jobs after the crash: core and burst done %s after the SIGKILL", time.Since(killed).Round(time.Millisecond))
	if j := r.job(after); j.Worker != fixed.ID() {
		t.Errorf("core job ran on %q, want the fixed worker", j.Worker)
	}
	if j := r.job(burst); j.Worker != fixed.ID() || j.Queue != string(queues.QueueLoan) {
		t.Errorf("burst job ran on %q from %q, want the fixed worker from loan (lent by the new leader)", j.Worker, j.Queue)
	}
	if standby.exited() {
		t.Errorf("the new leader exited:\n%s", standby.log())
	}
}

func coreSleep(key string) jobs.Submission {
	return jobs.Submission{Template: "hy-sleep", IdempotencyKey: key, Class: string(jobs.ClassCore),
		Params: map[string]json.RawMessage{"seconds": json.RawMessage("0.2")}}
}
