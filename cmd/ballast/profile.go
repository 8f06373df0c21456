package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startProfile writes a CPU profile of the whole run to the file named by
// BALLAST_CPUPROFILE, for finding where a slow command (plan on a long
// trace) spends its time with `go tool pprof`. It is an environment
// variable rather than a flag so that every subcommand gets it without
// each parsing it. The returned func stops the profile; it is a no-op
// when the variable is unset.
func startProfile() func() {
	path := os.Getenv("BALLAST_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ballast: cpu profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "ballast: cpu profile: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
