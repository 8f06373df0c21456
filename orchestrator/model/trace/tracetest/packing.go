// Package tracetest holds the oracles the tests of trace and of its users
// check a GPU-share bound against: exact answers found by trying every
// case, too slow for anything but a handful of inputs.
package tracetest

import (
	"slices"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// FewestDevices packs shares (thousandths of a GPU) onto devices of one
// whole GPU each by trying every placement: the true least number of
// devices, for a handful of shares.
func FewestDevices(shares []int) int {
	s := slices.Clone(shares)
	// Largest first finds a good packing early, so the search prunes.
	slices.SortFunc(s, func(a, b int) int { return b - a })
	best := len(s)
	var room []int
	var try func(i int)
	try = func(i int) {
		if len(room) >= best {
			return
		}
		if i == len(s) {
			best = len(room)
			return
		}
		for d := range room {
			if room[d] >= s[i] {
				room[d] -= s[i]
				try(i + 1)
				room[d] += s[i]
			}
		}
		room = append(room, jobs.GPUMilli-s[i])
		try(i + 1)
		room = room[:len(room)-1]
	}
	try(0)
	return best
}
