//go:build race

package sim

// raceOn reports a test binary built with -race.
const raceOn = true
