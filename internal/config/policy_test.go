package config

import (
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/policy"
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

func TestCoreOverflowSettings(t *testing.T) {
	cfg, err := Parse([]byte(`
pools:
  fixed: {kind: fixed, slots: 2}
capacity:
  core_overflow: true
  core_max_wait: 2s
templates:
  nightly: {command: [run], class: core, core_max_wait: 0s}
  train: {command: [train], class: core}
pipelines:
  p:
    schedule: "@daily"
    deadline: "06:00"
    steps:
      a: {template: train, core_max_wait: 5m}
`), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if pc := cfg.PolicyConfig(); !pc.CoreOverflow || pc.CoreMaxWait != 2*time.Second {
		t.Fatalf("policy config %+v: want overflow on after 2s", pc)
	}
	if w := cfg.Templates["nightly"].CoreMaxWait; w == nil || *w != 0 {
		t.Fatalf("template nightly core_max_wait %v, want an explicit 0", w)
	}
	if w := cfg.Templates["train"].CoreMaxWait; w != nil {
		t.Fatalf("template train core_max_wait %v, want unset", *w)
	}
	if got := cfg.CoreMaxWaitByTemplate(); len(got) != 1 || got["nightly"] != 0 {
		t.Fatalf("CoreMaxWaitByTemplate = %v, want only nightly: 0", got)
	}
	if w := cfg.Pipelines["p"].Steps["a"].CoreMaxWait; w == nil || w.Std() != 5*time.Minute {
		t.Fatalf("step core_max_wait %v, want 5m", w)
	}

	// Off by default, with the policy's 30m wait.
	def, err := Parse([]byte("pools:\n  fixed: {kind: fixed, slots: 2}\n"), "d.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if pc := def.PolicyConfig(); pc.CoreOverflow || pc.CoreMaxWait != policy.DefaultConfig().CoreMaxWait {
		t.Fatalf("defaults %+v: want overflow off, 30m", pc)
	}

	_, err = Parse([]byte(`
pools:
  fixed: {kind: fixed, slots: 2}
capacity:
  core_max_wait: -1s
templates:
  t: {command: [run], class: core, core_max_wait: -2s}
`), "bad.yaml")
	for _, f := range []string{"capacity.core_max_wait", "templates.t.core_max_wait"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("negative waits: %v; want a problem naming %s", err, f)
		}
	}
	// Steps are checked against a valid catalog.
	_, err = Parse([]byte(`
pools:
  fixed: {kind: fixed, slots: 2}
templates:
  t: {command: [run], class: core}
pipelines:
  p:
    schedule: "@daily"
    steps:
      a: {template: t, core_max_wait: -3s}
`), "bad-step.yaml")
	if err == nil || !strings.Contains(err.Error(), "pipelines.p.steps.a.core_max_wait") {
		t.Errorf("a negative step wait: %v; want a problem naming pipelines.p.steps.a.core_max_wait", err)
	}
	// Strict decoding: a misspelt key is refused, not ignored.
	_, err = Parse([]byte("capacity:\n  core_overflows: true\n"), "typo.yaml")
	if err == nil || !strings.Contains(err.Error(), "core_overflows") {
		t.Fatalf("a misspelt key: %v", err)
	}
}
