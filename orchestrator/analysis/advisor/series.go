package advisor

import "time"

// The measured series the controller keeps in Redis for the advisor.
const (
	// SeriesFixedIdle is the quota's idle share, sampled once a minute.
	SeriesFixedIdle = "fixed_idle"
	// SeriesKeep is how long samples are kept: two weeks, the window
	// thresholds are judged on, and a day to spare.
	SeriesKeep = 15 * 24 * time.Hour
)
