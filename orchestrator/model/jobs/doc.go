// Package jobs is Ballast's pure job model: templates with typed parameters,
// submissions, the resolved spec that is stored and run, job records and their
// states. It does no I/O, so the intake, the workers, the controller and the
// simulator all agree on what a valid job is.
package jobs
