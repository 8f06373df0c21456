package policy

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestLend(t *testing.T) {
	core, burst := jobs.ClassCore, jobs.ClassBurst
	q := func(id string, age time.Duration) Job { return queued(id, burst, QueueBurst, ago(age)) }
	loan := func(id string, age time.Duration) Job { return queued(id, burst, QueueLoan, ago(age)) }
	c := func(id string) Job { return queued(id, core, QueueCore, ago(time.Second)) }
	fx := func(busy int) ([]Pool, []Worker) { return fixedWith(10, busy) }

	pinUS := q("us1", 5*time.Minute)
	pinUS.Region = "us"
	pinEU := q("eu1", 4*time.Minute)
	pinEU.Region = "eu"
	inFlight := q("l0", time.Hour)
	inFlight.PendingAction = Lend

	// Readmitted jobs (sent back after they ran) were queued again
	// moments ago, but were admitted long before the others.
	readmitted := func(id string, submitted time.Duration) Job {
		j := q(id, 10*time.Second)
		j.Readmitted, j.SubmittedAt = true, ago(submitted)
		return j
	}

	p3, w3 := fx(3)
	p5, w5 := fx(5)
	p10, w10 := fx(10)
	p9, w9 := fx(9)
	p7, w7 := fx(7)
	runCases(t, []planCase{
		{"lend oldest first up to high", snap(p3, w3, q("a", 1*time.Minute), q("b", 5*time.Minute), q("c", 3*time.Minute), q("d", 4*time.Minute), q("e", 2*time.Minute)), t0,
			"lend(b) lend(d) lend(c) lend(e)"},
		{"readmitted first, by submission", snap(p5, w5, q("a", 5*time.Minute), q("b", time.Minute), readmitted("r1", 30*time.Minute),
			readmitted("r2", time.Hour)), t0, "lend(r2) lend(r1)"},
		{"queued core that fits counts", snap(p3, w3, c("c1"), c("c2"), q("a", time.Minute), q("b", time.Minute)), t0, "lend(a) lend(b)"},
		{"queued loans count", snap(p3, w3, loan("l1", time.Minute), loan("l2", time.Minute), loan("l3", time.Minute), q("a", time.Minute)), t0, "lend(a)"},
		{"loans in flight count", snap(p5, w5, inFlight, q("a", time.Minute), q("b", time.Second)), t0, "lend(a)"},
		{"at high nothing is lent", snap(p7, w7, q("a", time.Minute)), t0, ""},
		{"core waiting blocks lending", snap(p9, w9, c("c1"), c("c2"), q("a", time.Minute)), t0, ""},
		{"a pinned job is lent only where fixed is", snap(p3, w3, pinUS, pinEU), t0, "lend(eu1)"},
		{"zero fixed slots lends nothing", snap(nil, nil, q("a", time.Minute)), t0, ""},
		{"full fixed: core unlends the newest loans", snap(p10, w10, c("c1"), loan("l1", 3*time.Minute), loan("l2", time.Minute), loan("l3", 2*time.Minute)), t0,
			"unlend(l2) unlend(l3) unlend(l1)"},
		{"only loans that no longer fit are unlent", snap(p7, w7, c("c1"), c("c2"), loan("l1", 3*time.Minute), loan("l2", time.Minute)), t0, "unlend(l2)"},
		{"loans that still fit stay", snap(p5, w5, c("c1"), loan("l1", time.Minute)), t0, ""},
	})
}
