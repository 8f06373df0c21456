package flows

// AllKeys names one key of every family the store writes, for the test
// that checks their names and hash tag.
func (s *Store) AllKeys() []string {
	return []string{s.sweep("s"), s.sweepTrials("s"), s.sweepSpecs("s"), s.sweepStopped("s"), s.sweeps(),
		s.activeSweeps(), s.sweepIdem("k"), s.run("r"), s.activeRuns(), s.pipelineRuns("p"), s.pipelineCursor("p"),
		s.fired("d")}
}
