package api

import (
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/logs"
	"github.com/ballastdev/ballast/queues/registry"
)

// The wired store must keep satisfying each part the endpoints use; a
// method renamed in queues fails here. internal/archtest reads these
// lines to hold each interface to at most 15 methods.
var (
	_ JobDesk      = (*queues.Store)(nil)
	_ FlowDesk     = (*queues.Store)(nil)
	_ StatusReader = (*queues.Store)(nil)
	_ LogReader    = (*logs.Store)(nil)
	_ WorkerLister = (*registry.Store)(nil)
)
