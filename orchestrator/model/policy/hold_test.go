package policy

import (
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// TestHoldBetweenWatermarks checks rule 6: between the watermarks nothing
// migrates or drains, while rule 2 still admits queued burst work up to the
// high watermark (and not beyond it).
func TestHoldBetweenWatermarks(t *testing.T) {
	burst := jobs.ClassBurst
	pools := []Pool{fixedPool("fx", "eu"), elasticPool("sp", PoolSpot, "eu", 0.3)}
	s1 := worker("s1", "sp", 4, 0)
	ws := func(busy int) []Worker { return []Worker{worker("f1", "fx", 10, busy), s1} }
	r := running("m1", burst, s1, ago(time.Minute))
	q := queued("q1", burst, QueueBurst, ago(time.Minute))

	runCases(t, []planCase{
		{"just above low holds", snap(pools, ws(4), r), t0, ""},
		{"just below high holds but still lends up to high", snap(pools, ws(6), r, q), t0, "lend(q1)"},
		{"at high nothing more is lent; the spot worker has room", snap(pools, ws(7), r, q), t0, ""},
		{"just below low moves work back", snap(pools, ws(3), r), t0, "migrate(m1,s1) drain(s1)"},
	})
}
