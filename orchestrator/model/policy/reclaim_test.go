package policy

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestReclaim(t *testing.T) {
	core, burst := jobs.ClassCore, jobs.ClassBurst
	pools, ws := fixedWith(10, 10)
	f1 := ws[0]

	// b1 never checkpointed (5m lost); b2 checkpointed a minute ago (1m lost).
	b1 := running("b1", burst, f1, ago(5*time.Minute))
	b2 := running("b2", burst, f1, ago(30*time.Minute))
	b2.LastCheckpointAt = ago(time.Minute)
	// b3 cannot resume: its old checkpoint is worthless, it loses 2m.
	b3 := running("b3", burst, f1, ago(2*time.Minute))
	b3.Checkpointable = false
	b3.LastCheckpointAt = ago(90 * time.Second)
	// b4 and b5 tie on lost work; the newer start (b5) goes first.
	b4 := running("b4", burst, f1, ago(20*time.Minute))
	b4.LastCheckpointAt = ago(3 * time.Minute)
	b5 := running("b5", burst, f1, ago(10*time.Minute))
	b5.LastCheckpointAt = ago(3 * time.Minute)

	c := func(id string) Job { return queued(id, core, QueueCore, ago(time.Second)) }
	inFlight := b2
	inFlight.PendingAction = Reclaim

	drainingPools := []Pool{fixedPool("fx", "eu")}
	dw := worker("f2", "fx", 4, 4)
	dw.State = WorkerDraining
	upFull := worker("f1", "fx", 4, 4)

	runCases(t, []planCase{
		{"least lost work goes first", snap(pools, ws, b1, b2, c("c1")), t0, "reclaim(b2,f1)"},
		{"a job that cannot resume loses all since start", snap(pools, ws, b1, b3, c("c1")), t0, "reclaim(b3,f1)"},
		{"newest start breaks a tie", snap(pools, ws, b4, b5, c("c1")), t0, "reclaim(b5,f1)"},
		{"one victim per core job that cannot start", snap(pools, ws, b1, b2, b4, c("c1"), c("c2")), t0, "reclaim(b2,f1) reclaim(b4,f1)"},
		{"reclaims in flight count", snap(pools, ws, b1, inFlight, c("c1"), c("c2")), t0, "reclaim(b1,f1)"},
		{"core that fits does not reclaim", snap(pools, []Worker{worker("f1", "fx", 10, 8)}, b1, b2, c("c1"), c("c2")), t0, ""},
		{"zero fixed slots: nothing to reclaim", snap(pools, nil, c("c1")), t0, ""},
		{"a draining fixed worker frees no usable slot", snap(drainingPools, []Worker{upFull, dw}, running("b9", burst, dw, ago(time.Minute)), c("c1")), t0, ""},
	})
}
