package flows

// The keys of runs and sweeps, under the namespace's prefix (and so its
// hash tag). Their names are those the keys had while queues kept flows,
// so an installation's runs and sweeps stay readable.

// Keys of sweeps (see sweeps.go).
func (s *Store) sweep(id string) string        { return s.prefix + "sweep:" + id }
func (s *Store) sweepTrials(id string) string  { return s.sweep(id) + ":trials" }
func (s *Store) sweepSpecs(id string) string   { return s.sweep(id) + ":specs" }
func (s *Store) sweepStopped(id string) string { return s.sweep(id) + ":stopped" }
func (s *Store) sweeps() string                { return s.prefix + "sweeps" }
func (s *Store) activeSweeps() string          { return s.prefix + "sweeps:active" }
func (s *Store) sweepIdem(key string) string   { return s.prefix + "idem-sweep:" + key }

// Keys of pipeline runs (see runs.go).
func (s *Store) run(id string) string            { return s.prefix + "run:" + id }
func (s *Store) activeRuns() string              { return s.prefix + "runs:active" }
func (s *Store) pipelineRuns(name string) string { return s.prefix + "pipeline:" + name + ":runs" }
func (s *Store) pipelineCursor(name string) string {
	return s.prefix + "pipeline:" + name + ":handled"
}
func (s *Store) fired(dedupeKey string) string { return s.prefix + "fired:" + dedupeKey }
