package pipeline

// Decision is what to do with a run whose time has come.
type Decision int

const (
	// Start the new run.
	Start Decision = iota
	// Skip the new run; the previous one keeps running.
	Skip
	// ReplacePrevious cancels the previous run, then starts the new one.
	ReplacePrevious
)

func (d Decision) String() string {
	switch d {
	case Start:
		return "start"
	case Skip:
		return "skip"
	case ReplacePrevious:
		return "replace-previous"
	}
	return "unknown"
}

// OnOverlap decides a due run given whether the pipeline's previous run is
// still active. An empty or unknown policy acts as forbid, the safe default:
// it never runs two copies and never cancels work.
func OnOverlap(policy Overlap, previousRunActive bool) Decision {
	if !previousRunActive {
		return Start
	}
	switch policy {
	case OverlapAllow:
		return Start
	case OverlapReplace:
		return ReplacePrevious
	}
	return Skip
}
