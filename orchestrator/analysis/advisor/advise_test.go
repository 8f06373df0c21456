package advisor

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/planner"
)

func TestBalancedWindowGetsNoAdvice(t *testing.T) {
	if rs := Advise(balanced()); len(rs) != 0 {
		t.Errorf("balanced window got %v, want nothing", kinds(rs))
	}
}

// everything breaks every rule at once.
func everything() Window {
	w := balanced()
	w.High, w.Low = 0.95, 0.85
	for k := range 20 {
		w.ElasticWaits = append(w.ElasticWaits, Wait{At: at(10, 20, 30*k), Class: "burst", Wait: time.Duration(k+1) * time.Minute})
	}
	for i := range w.FixedIdle {
		w.FixedIdle[i].Value = 0.6
	}
	w.Templates = append(w.Templates,
		TemplateHours{Template: "render", Class: "burst", ActiveHoursPerDay: 10, SlotHoursPerDay: 40, Days: 14},
		TemplateHours{Template: "sweep", Class: "burst", ActiveHoursPerDay: 9, SlotHoursPerDay: 40, Days: 14},
		TemplateHours{Template: "report", Class: "core", ActiveHoursPerDay: 5, SlotHoursPerDay: 10, Days: 14},
	)
	return w
}

func TestOrderIsFixedByRule(t *testing.T) {
	got := kinds(Advise(everything()))
	want := []string{
		KindElasticWaits, KindWatermarkGap, KindWatermarkHeadroom, KindFixedIdle,
		KindTemplateToFixed, KindTemplateToFixed, KindTemplateToElastic,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
	// Templates: largest work first, equal work by name.
	var names []string
	for _, r := range Advise(everything())[4:] {
		names = append(names, r.Evidence.Template.Template)
	}
	if want := []string{"render", "sweep", "report"}; !slices.Equal(names, want) {
		t.Errorf("template order %v, want %v", names, want)
	}
}

func TestAdviceIgnoresInputOrder(t *testing.T) {
	base := everything()
	// Two idle readings at one instant: which one stands for the hour
	// must not depend on which comes first in the slice.
	base.FixedIdle = append(base.FixedIdle, Sample{At: at(5, 0, 0), Value: 0.9})
	want := Advise(base)
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		w := base
		w.ElasticWaits = slices.Clone(base.ElasticWaits)
		w.FixedIdle = slices.Clone(base.FixedIdle)
		w.Templates = slices.Clone(base.Templates)
		r.Shuffle(len(w.ElasticWaits), func(i, j int) { w.ElasticWaits[i], w.ElasticWaits[j] = w.ElasticWaits[j], w.ElasticWaits[i] })
		r.Shuffle(len(w.FixedIdle), func(i, j int) { w.FixedIdle[i], w.FixedIdle[j] = w.FixedIdle[j], w.FixedIdle[i] })
		r.Shuffle(len(w.Templates), func(i, j int) { w.Templates[i], w.Templates[j] = w.Templates[j], w.Templates[i] })
		if got := Advise(w); !reflect.DeepEqual(got, want) {
			t.Fatalf("shuffled input changed the advice:\n got %+v\nwant %+v", got, want)
		}
	}
}

func TestAdviseDoesNotTouchItsInput(t *testing.T) {
	w := everything()
	before := everything()
	Advise(w)
	if !reflect.DeepEqual(w, before) {
		t.Error("Advise reordered or changed the window's slices")
	}
}

func TestMissingPricesAreSaidAndBlockTemplateAdvice(t *testing.T) {
	w := balanced()
	w.Prices = planner.Prices{FixedPerSlotHour: 1}
	w.Templates = append(w.Templates, TemplateHours{Template: "render", Class: "burst", ActiveHoursPerDay: 20, SlotHoursPerDay: 40, Days: 14})
	r := only(t, Advise(w), KindPrices)
	if r.Severity != SeverityWarn || r.Evidence.Prices == nil || r.Evidence.Prices.FixedPerSlotHour != 1 {
		t.Errorf("prices recommendation %+v", r)
	}
}
