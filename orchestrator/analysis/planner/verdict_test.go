package planner

import (
	"strings"
	"testing"
	"time"
)

func TestTheConfigToPasteIsOneTheControllerAccepts(t *testing.T) {
	p := Plan{fixedPool: "onprem", elasticPools: []string{"od", "spot"}}
	for _, tc := range []struct {
		c          Candidate
		want, lack []string
	}{
		{Candidate{Strategy: StrategyHybrid, FixedSlots: 12, Watermarks: Watermarks{0.9, 0.6}, CoreOverflow: true, CoreMaxWait: 460 * time.Second},
			[]string{"pools.onprem.slots: 12", "watermarks.high: 0.90", "watermarks.low: 0.60", "capacity.core_overflow: true", "capacity.core_max_wait: 7m40s"},
			[]string{"remove"}},
		// A fixed pool with zero slots fails validation: no quota is no pool.
		{Candidate{Strategy: StrategyHybrid, FixedSlots: 0, Watermarks: Watermarks{0.7, 0.4}},
			[]string{"no fixed pool (remove pools.onprem)", "capacity.core_overflow: false"}, []string{"slots: 0"}},
		{Candidate{Strategy: StrategyAllElastic},
			[]string{"no fixed pool (remove pools.onprem)", "capacity.core_overflow: true", "capacity.core_max_wait: 0s"}, []string{"slots"}},
		// All fixed was simulated without elastic pools.
		{Candidate{Strategy: StrategyAllFixed, FixedSlots: 70, Watermarks: Watermarks{1, 0.4}},
			[]string{"pools.onprem.slots: 70", "no elastic pools (remove pools.od, pools.spot)"}, []string{"overflow"}},
	} {
		got := p.configFor(tc.c)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.c, got, w)
			}
		}
		for _, l := range tc.lack {
			if strings.Contains(got, l) {
				t.Errorf("%s: %q has %q", tc.c, got, l)
			}
		}
	}
	// Nothing feasible: nothing to paste.
	s := p.summarize(Point{Candidate: Candidate{Strategy: StrategyHybrid, FixedSlots: 3}, Verdict: Verdict{Why: "core wait p95 2h"}})
	p.Recommended = s
	if s.Config != "" || !strings.Contains(p.VerdictLine(), "Nothing to paste") {
		t.Errorf("an infeasible pick gives config %q and verdict %q", s.Config, p.VerdictLine())
	}
}
