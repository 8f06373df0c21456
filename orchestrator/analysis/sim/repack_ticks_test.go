package sim

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// shareMix is a few hours of GPU shares and whole GPUs, half of them
// checkpointable, with run times from minutes to hours: work that leaves
// room beside shares on some GPUs and shares alone on others.
func shareMix(seed uint64) trace.Trace {
	r := rand.New(rand.NewPCG(seed, 7))
	var js []trace.Job
	at := time.Duration(0)
	for range 150 {
		at += time.Duration(r.IntN(900)) * time.Second
		d := time.Duration(2+r.IntN(180)) * time.Minute
		j := burstJob(at, d, r.IntN(2) == 0)
		if r.IntN(4) != 0 {
			j.Share = 100 + 50*r.IntN(17)
		}
		js = append(js, j)
	}
	return mkTrace(js...)
}

// Rule 5 repacks shares on ticks the simulator wakes for (mayRepack): the
// runs that skip ticks nothing is due on must equal those that decide on
// every tick, on machines of one, two and four GPUs.
func TestShareRepacksSkipNoTick(t *testing.T) {
	repacks := 0
	for _, gpus := range []int{1, 2, 4} {
		for seed := range uint64(8) {
			t.Run(fmt.Sprintf("%d-GPU/seed-%d", gpus, seed), func(t *testing.T) {
				o := Options{Pools: []policy.Pool{quota(1), onDemand(2, gpus)}, FixedSlots: 1, CheckpointOverhead: 30 * time.Second,
					Config: policy.DefaultConfig()}
				o.Pools[1].StartupDelay, o.Pools[1].IdleTTL = 30*time.Second, 2*time.Minute
				// A one-slot quota sits below any low watermark: rule 4
				// would drain every elastic worker, leaving rule 5 nothing.
				o.Config.Low = 0
				tr := shareMix(seed)
				base := runWith(t, tr, o, false, false)
				every := runWith(t, tr, o, true, false)
				if every.Decisions <= base.Decisions {
					t.Errorf("deciding every tick made %d decisions, skipping %d", every.Decisions, base.Decisions)
				}
				every.Decisions = base.Decisions
				if !reflect.DeepEqual(base, every) {
					t.Errorf("skipping ticks changed the run:\n got %+v\nwant %+v", base, every)
				}
				repacks += base.Preemptions.Repack
			})
		}
	}
	if repacks == 0 {
		t.Fatal("no repack in any run: the test exercises too little")
	}
	t.Logf("%d repacks", repacks)
}
