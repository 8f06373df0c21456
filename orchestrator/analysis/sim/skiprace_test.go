package sim

import "testing"

// skipUnderRace skips a test of the simulator alone under -race. The
// simulator is one goroutine, so the race detector finds nothing in such
// a test, and slows it five to ten times: these tests were most of the
// package's minutes in the race run. .ci/run runs the whole package again
// without -race, where they take seconds. Tests that run simulations
// side by side (Compare) stay in the race run.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceOn {
		t.Skip("the simulator alone, slow under -race; .ci/run runs the package without it")
	}
}
