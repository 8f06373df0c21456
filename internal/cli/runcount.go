package cli

import "fmt"

// runDeliveryText says which run and which delivery an event or record is
// about, the two counters a user must not confuse: runs started on a
// worker, deliveries are the fencing counter that also counts moves of a
// waiting job. Without a run (queued, moved before it ran, or an event
// from a version that did not carry the count) only the delivery is named.
func runDeliveryText(runs, deliveries int) string {
	if runs <= 0 {
		return fmt.Sprintf("delivery %d", deliveries)
	}
	return fmt.Sprintf("run %d, delivery %d", runs, deliveries)
}
