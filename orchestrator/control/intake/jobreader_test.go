package intake_test

import (
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/queues"
)

// The wired store must keep satisfying JobReader; internal/archtest
// reads this line to hold the interface to at most 15 methods.
var _ intake.JobReader = (*queues.Store)(nil)
