// Package timespan holds the two comparisons of instants that the cost
// ledger, the insight reports, the pipeline scheduler and the controller's
// kept view each wrote for themselves.
package timespan

import "time"

// Earlier is the earlier of a and b; b when they are the same instant.
func Earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Later is the later of a and b; b when they are the same instant.
func Later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
