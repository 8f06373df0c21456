package insight

import (
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/leader"
	"github.com/ballastdev/ballast/queues/redisinfo"
	"github.com/ballastdev/ballast/queues/usage"
)

// The wired stores must keep satisfying each interface insight declares;
// internal/archtest reads these lines to hold each to at most 15 methods.
var (
	_ Store          = (*queues.Store)(nil)
	_ ClusterReader  = (*queues.Store)(nil)
	_ JobHistory     = (*queues.Store)(nil)
	_ Accounting     = (*usage.Store)(nil)
	_ UsageLedger    = (*usage.Store)(nil)
	_ SeriesBook     = (*usage.Store)(nil)
	_ LeaseHolder    = (*leader.Store)(nil)
	_ TopologyReader = (*redisinfo.Store)(nil)
)
