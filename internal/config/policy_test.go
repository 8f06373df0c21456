package config

import (
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
