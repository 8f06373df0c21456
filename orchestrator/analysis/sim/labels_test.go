package sim

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// A job that requires labels runs only on workers whose pool carries
// them, on a machine big enough: with a T4 quota and on-demand pools of
// 4-GPU A100 and cheaper 1-GPU T4 machines, the A100 jobs all run on
// on-demand A100 machines, the 8-GPU one nowhere, the 2-GPU T4 job on the quota,
// and the job that requires nothing on the quota too. invariants checks
// every running job's worker at every tick.
func TestLabelledJobsRunWhereTheyFit(t *testing.T) {
	model := func(m string) map[string]string { return map[string]string{"gpu_model": m} }
	job := func(j trace.Job, slots int, m string) trace.Job {
		j.Slots, j.Requires = slots, model(m)
		return j
	}
	od := func(name, m string, slots int, price float64) policy.Pool {
		p := onDemand(price, slots)
		p.Name, p.Labels = name, model(m)
		return p
	}
	tr := mkTrace(
		job(burstJob(0, time.Hour, false), 1, "A100"), job(burstJob(0, time.Hour, false), 1, "A100"),
		job(burstJob(0, time.Hour, false), 4, "A100"), job(burstJob(0, time.Hour, false), 8, "A100"),
		job(coreJob(0, time.Hour), 2, "T4"), coreJob(0, time.Hour),
	)
	fixed := quota(1)
	fixed.Labels = model("T4")
	r := runChecked(t, tr, Options{Pools: []policy.Pool{fixed, od("od-a100", "A100", 4, 2), od("od-t4", "T4", 1, 1)}, FixedSlots: 4})

	if r.Jobs != 5 || r.Unfinished != 1 {
		t.Errorf("%d jobs finished, %d not: want every job but the 8-GPU one", r.Jobs, r.Unfinished)
	}
	q, a, b := pool(t, r, "quota"), pool(t, r, "od-a100"), pool(t, r, "od-t4")
	if q.SlotHours != 3 || a.SlotHours != 6 || b.Launched != 0 {
		t.Errorf("slot-hours: quota %v, od-a100 %v; od-t4 launched %d: want 3, 6 and none", q.SlotHours, a.SlotHours, b.Launched)
	}
}
