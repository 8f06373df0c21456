package insight

import "github.com/ballastdev/ballast/queues"

// The wired store must keep satisfying each interface insight declares;
// internal/archtest reads these lines to hold each to at most 15 methods.
var (
	_ Store         = (*queues.Store)(nil)
	_ ClusterReader = (*queues.Store)(nil)
	_ UsageLedger   = (*queues.Store)(nil)
	_ SeriesBook    = (*queues.Store)(nil)
)
