package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func TestUtilizationWithoutFixedSlots(t *testing.T) {
	if u := Utilization(Snapshot{}); u != 1 {
		t.Errorf("no fixed slots: utilization %v, want 1", u)
	}
	draining := worker("f1", "fx", 4, 0)
	draining.State = WorkerDraining
	s := snap([]Pool{fixedPool("fx", "")}, []Worker{draining, worker("f2", "fx", 4, 1)})
	if l := Load(s); l.Slots != 4 || l.Busy != 1 {
		t.Errorf("a draining fixed worker is not capacity: got %+v", l)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	c := Config{High: 1.5, Low: 0.9, ReleaseMargin: -time.Second, MaxSpotPreemptions: -1}
	err := c.Validate()
	var v *jobs.ValidationError
	if !errors.As(err, &v) {
		t.Fatalf("got %v, want a ValidationError", err)
	}
	var fields []string
	for _, p := range v.Problems {
		fields = append(fields, p.Field)
	}
	want := []string{"policy.high", "policy.release_margin", "policy.max_spot_preemptions"}
	if !reflect.DeepEqual(fields, want) {
		t.Errorf("fields %v, want %v", fields, want)
	}
}

func TestSnapshotValidate(t *testing.T) {
	w := worker("s1", "sp", 4, 0)
	core := running("c1", jobs.ClassCore, w, ago(time.Minute))
	lend := queued("l1", jobs.ClassBurst, QueueLoan, t0)
	lend.PendingAction = Lend
	s := snap([]Pool{elasticPool("sp", PoolSpot, "", 1), {Name: "sp", Kind: "cloud"}}, []Worker{w}, core, lend)
	s.Launches = []Launch{{Pool: "nope", Count: 0}}
	err := s.Validate()
	if err == nil {
		t.Fatal("want errors")
	}
	for _, part := range []string{
		`pools[1].name: "sp" is used twice`,
		`pools[1].kind: "cloud" is unknown`,
		"jobs[c1].worker: a core job runs on spot capacity",
		`jobs[l1].pending_action: lend does not apply`,
		`launches[0].pool: "nope" is not an elastic pool`,
		"launches[0].count",
	} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error lacks %q:\n%v", part, err)
		}
	}
}

func TestValidateRefusesAZeroMarginWithHourlyBilling(t *testing.T) {
	oh := elasticPool("oh", PoolOnDemand, "eu", 1)
	oh.Billing = BillingPerHour
	s := snap([]Pool{oh}, nil)
	s.Config.ReleaseMargin = 0
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "config.release_margin") {
		t.Errorf("got %v, want a release_margin error", err)
	}
	s.Pools[0].Billing = BillingPerSecond
	if err := s.Validate(); err != nil {
		t.Errorf("per-second billing needs no margin: %v", err)
	}
}

func TestApplyLeavesItsInputAlone(t *testing.T) {
	pools, ws := fixedWith(1, 1)
	b := running("b1", jobs.ClassBurst, ws[0], ago(time.Minute))
	s := snap(append(pools, elasticPool("sp", PoolSpot, "eu", 0.3)), ws, b, queued("c1", jobs.ClassCore, QueueCore, t0))
	before := reflect.ValueOf(s.Jobs[0]).Interface()
	p := Decide(s, t0)
	out := Apply(s, p, t0)
	if !reflect.DeepEqual(s.Jobs[0], before) {
		t.Error("Apply wrote into its input")
	}
	if out.Jobs[0].PendingAction != Reclaim || len(out.Launches) != 1 {
		t.Errorf("applied snapshot: %+v, launches %+v", out.Jobs[0], out.Launches)
	}
}

func TestPlanString(t *testing.T) {
	if got := (Plan{}).String(); got != "plan: nothing to do" {
		t.Errorf("empty plan: %q", got)
	}
	p := Plan{Actions: []Action{
		{Kind: Lend, Job: "j1", Queue: QueueLoan, Rule: 2, Reason: "fixed utilization with queued work 0.60 <= high 0.70, no core waiting"},
		{Kind: ScaleUp, Pool: "spot", Count: 2, Rule: 3, Reason: "r"},
	}}
	want := "plan:\n  lend job=j1 -> loan (rule 2: fixed utilization with queued work 0.60 <= high 0.70, no core waiting)\n  scale_up pool=spot n=2 (rule 3: r)"
	if got := p.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if p.Count(Lend) != 1 || p.Count(Drain) != 0 || p.Empty() {
		t.Error("Count or Empty is wrong")
	}
}
