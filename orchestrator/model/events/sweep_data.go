package events

// The Data keys of sweep events, written and read in this file only.
const (
	sweepTemplate    = "template"
	sweepTrials      = "trials"
	sweepMaxParallel = "max_parallel"
	sweepCounts      = "counts"
	sweepBestTrial   = "best_trial"
	sweepBestMetric  = "best_metric"
	sweepTrial       = "trial"
	sweepStep        = "step"
	sweepMetric      = "metric"
)

// SweepCreated is what a sweep.created event says.
type SweepCreated struct {
	Template    string
	Trials      int
	MaxParallel int
}

// Data is c as a sweep.created event's Data.
func (c SweepCreated) Data() map[string]any {
	return map[string]any{sweepTemplate: c.Template, sweepTrials: c.Trials, sweepMaxParallel: c.MaxParallel}
}

// ParseSweepCreated reads a sweep.created event back; false for any other
// type.
func ParseSweepCreated(e Event) (SweepCreated, bool) {
	if e.Type != TypeSweepCreated {
		return SweepCreated{}, false
	}
	c := SweepCreated{Trials: int(number(e.Data[sweepTrials])), MaxParallel: int(number(e.Data[sweepMaxParallel]))}
	c.Template, _ = e.Data[sweepTemplate].(string)
	return c, true
}

// SweepCompleted is what a sweep.completed event says: its trials, how
// many ended in each state, and the best trial when one succeeded with a
// metric.
type SweepCompleted struct {
	Trials int
	// Counts is by trial state (the sweep package's TrialState names).
	Counts map[string]int
	// HasBest says BestTrial and BestMetric are set.
	HasBest    bool
	BestTrial  int
	BestMetric float64
}

// Data is c as a sweep.completed event's Data.
func (c SweepCompleted) Data() map[string]any {
	d := map[string]any{sweepTrials: c.Trials, sweepCounts: c.Counts}
	if c.HasBest {
		d[sweepBestTrial], d[sweepBestMetric] = c.BestTrial, c.BestMetric
	}
	return d
}

// ParseSweepCompleted reads a sweep.completed event back; false for any
// other type.
func ParseSweepCompleted(e Event) (SweepCompleted, bool) {
	if e.Type != TypeSweepCompleted {
		return SweepCompleted{}, false
	}
	c := SweepCompleted{Trials: int(number(e.Data[sweepTrials]))}
	switch m := e.Data[sweepCounts].(type) {
	case map[string]int:
		c.Counts = m
	case map[string]any:
		c.Counts = make(map[string]int, len(m))
		for k, v := range m {
			c.Counts[k] = int(number(v))
		}
	}
	if _, ok := e.Data[sweepBestTrial]; ok {
		c.HasBest = true
		c.BestTrial = int(number(e.Data[sweepBestTrial]))
		c.BestMetric = number(e.Data[sweepBestMetric])
	}
	return c, true
}

// TrialStopped is what a sweep.trial_stopped event says: which trial the
// median rule stopped, at which step, and its metric there.
type TrialStopped struct {
	Trial  int
	Step   int
	Metric float64
}

// Data is s as a sweep.trial_stopped event's Data.
func (s TrialStopped) Data() map[string]any {
	return map[string]any{sweepTrial: s.Trial, sweepStep: s.Step, sweepMetric: s.Metric}
}

// ParseTrialStopped reads a sweep.trial_stopped event back; false for any
// other type.
func ParseTrialStopped(e Event) (TrialStopped, bool) {
	if e.Type != TypeSweepTrialStopped {
		return TrialStopped{}, false
	}
	return TrialStopped{Trial: int(number(e.Data[sweepTrial])), Step: int(number(e.Data[sweepStep])),
		Metric: number(e.Data[sweepMetric])}, true
}
