package isolation

import (
	"fmt"
	"log/slog"

	"github.com/ballastdev/ballast/jobs"
)

// egress shapes each group's network traffic (net_cls classids matched by
// tc classes).
type egress struct {
	root string
	log  *slog.Logger
}

func newEgress(root string, log *slog.Logger) *egress { return &egress{root: root, log: log} }

func (e *egress) limit(d driver, rel, group string, rate jobs.ByteSize) error {
	return fmt.Errorf("egress shaping is not implemented on this worker yet; the group's traffic is not limited")
}

func (e *egress) close() {}
