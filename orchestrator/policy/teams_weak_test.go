package policy

import (
	"fmt"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/shares"
)

// TestSharesReclaimCountsWhatGPUSharesFree checks that a reclaim of a job
// holding a share of a GPU counts only the slots that actually empty: on
// a 4-slot worker, A (share 2) runs two whole in-share jobs and four
// loans of half a GPU each, packed in two slots. B's one in-share job
// needs a slot, which only two of the loans leaving free.
func TestSharesReclaimCountsWhatGPUSharesFree(t *testing.T) {
	var js []Job
	for i := range 2 {
		js = append(js, onFixed(fmt.Sprintf("a%d", i), "A", "f1", ago(3*time.Hour), ago(time.Second)))
	}
	for i := range 4 {
		l := onFixed(fmt.Sprintf("g%d", i), "A", "f1", ago(time.Hour), ago(time.Duration(i+1)*time.Minute))
		l.Share = 500
		js = append(js, l)
	}
	js = append(js, held("b", "B", t0))
	s := shareSnap(1, []shares.Team{team("A", 2), team("B", 2)}, js...)
	s.Workers[0].Busy = 4
	p := Decide(mustValidSnap(t, s), t0)
	wantList(t, "admissions", kinds(p, Admit), "b[B>B]")
	wantList(t, "reclaims", kinds(p, Reclaim), "g0[A>B]", "g1[A>B]")
}
