package config

import (
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/policy"
)

func TestPolicyPoolsCarryEverySettingInNameOrder(t *testing.T) {
	pools := Dev().PolicyPools()
	if len(pools) != 3 || pools[0].Name != "fixed" || pools[1].Name != "ondemand" || pools[2].Name != "spot" {
		t.Fatalf("pools %+v", pools)
	}
	od := pools[1]
	if od.Kind != policy.PoolOnDemand || od.PricePerSlotHour != 2.5 || od.Billing != policy.BillingPerSecond ||
		od.MinBilling != time.Minute || od.StartupDelay != 2*time.Second || od.MaxWorkers != 4 ||
		od.SlotsPerWorker != 1 || od.IdleTTL != 15*time.Second || od.Region == "" {
		t.Fatalf("ondemand pool %+v", od)
	}
	if pools[0].Kind != policy.PoolFixed || pools[2].Kind != policy.PoolSpot {
		t.Fatalf("kinds %s %s", pools[0].Kind, pools[2].Kind)
	}
}

func TestCapacitySettingsReachThePolicy(t *testing.T) {
	cfg, err := Parse([]byte(`
pools:
  fixed: {kind: fixed, slots: 2}
watermarks: {high: 0.8, low: 0.3}
capacity:
  spot_fallback_after: 90s
  max_spot_preemptions: 0
  release_margin: 5m
`), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pc := cfg.PolicyConfig()
	if pc.High != 0.8 || pc.Low != 0.3 || pc.SpotFallbackAfter != 90*time.Second || pc.MaxSpotPreemptions != 0 || pc.ReleaseMargin != 5*time.Minute {
		t.Fatalf("policy config %+v", pc)
	}
	if err := pc.Validate(); err != nil {
		t.Fatalf("the policy refuses what the config accepted: %v", err)
	}
	def := Dev().PolicyConfig()
	if want := policy.DefaultConfig(); def.SpotFallbackAfter != want.SpotFallbackAfter || def.MaxSpotPreemptions != want.MaxSpotPreemptions {
		t.Fatalf("defaults %+v, want %+v", def, want)
	}
	_, err = Parse([]byte(`
pools:
  fixed: {kind: fixed, slots: 2}
capacity:
  max_spot_preemptions: -1
  release_margin: 2h
`), "bad.yaml")
	if err == nil || !strings.Contains(err.Error(), "capacity.max_spot_preemptions") || !strings.Contains(err.Error(), "capacity.release_margin") {
		t.Fatalf("bad capacity settings: %v", err)
	}
}
