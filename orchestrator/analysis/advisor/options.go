package advisor

import "time"

// Options are the advisor's thresholds. A zero field takes its default
// (see DefaultOptions): none of them has a useful zero, since a zero
// threshold would flag every wait, every idle slot or every watermark pair.
type Options struct {
	// WaitWindow is the width of the sliding window the elastic wait p95
	// is taken over. Default 10 minutes.
	WaitWindow time.Duration `json:"wait_window"`
	// MaxWaitP95 is the p95 elastic wait above which the advisor warns.
	// Default 10 minutes.
	MaxWaitP95 time.Duration `json:"max_wait_p95"`
	// MaxIdle is the mean idle share of the fixed quota above which it
	// advises shrinking it. Default 0.30.
	MaxIdle float64 `json:"max_idle"`
	// MinWatermarkGap is the narrowest band between the high and low
	// watermarks that does not risk flapping. Default 0.20.
	MinWatermarkGap float64 `json:"min_watermark_gap"`
	// MaxHigh is the highest high watermark that still leaves core work
	// free slots. Default 0.90.
	MaxHigh float64 `json:"max_high"`
	// MinIdleCovered is how much time the quota's idle samples must cover
	// before its size is judged: a quota is bought for months, and a few
	// minutes of an idle quota (a controller just started) say nothing.
	// Default one hour.
	MinIdleCovered time.Duration `json:"min_idle_covered"`
}

// DefaultOptions returns the thresholds from the design.
func DefaultOptions() Options {
	return Options{
		WaitWindow:      10 * time.Minute,
		MaxWaitP95:      10 * time.Minute,
		MaxIdle:         0.30,
		MinWatermarkGap: 0.20,
		MaxHigh:         0.90,
		MinIdleCovered:  time.Hour,
	}
}

// withDefaults fills every zero or negative field from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.WaitWindow <= 0 {
		o.WaitWindow = d.WaitWindow
	}
	if o.MaxWaitP95 <= 0 {
		o.MaxWaitP95 = d.MaxWaitP95
	}
	if o.MaxIdle <= 0 {
		o.MaxIdle = d.MaxIdle
	}
	if o.MinWatermarkGap <= 0 {
		o.MinWatermarkGap = d.MinWatermarkGap
	}
	if o.MaxHigh <= 0 {
		o.MaxHigh = d.MaxHigh
	}
	if o.MinIdleCovered <= 0 {
		o.MinIdleCovered = d.MinIdleCovered
	}
	return o
}
