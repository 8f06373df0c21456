package jobs

import (
	"fmt"
	"math"
)

// A GPU share is part of one GPU: a job of gpu_share 0.5 runs on a GPU
// that another job of 0.5 may run on at the same time, both bound to the
// same device. Shares are declared as a fraction, the way people speak of
// them and the way traces record them, and counted in thousandths (milli)
// everywhere else, so that packing never adds up floating-point error: a
// device holds shares while their milli sum to at most GPUMilli.
//
// A share is one slot's worth at most: it asks for part of one GPU, so it
// cannot be spread over slots (slots > 1) or over a gang's workers; a job
// that needs several GPUs asks for whole ones.

// GPUMilli is one whole GPU in thousandths.
const GPUMilli = 1000

// ShareMilli is the job's GPU share in thousandths of a GPU, 0 for a job
// that asks for none (whole GPUs, or no GPU at all).
func (z Size) ShareMilli() int {
	if z.GPUShare <= 0 || z.GPUShare >= 1 || math.IsNaN(z.GPUShare) {
		return 0
	}
	return int(math.Round(z.GPUShare * GPUMilli))
}

// validateShare checks gpu_share, named f: in (0, 1), in whole
// thousandths, and only on a job of one slot and one member.
func (z Size) validateShare(f string, ps *problems) {
	x := z.GPUShare
	if x == 0 {
		return
	}
	if math.IsNaN(x) || x <= 0 || x >= 1 {
		ps.add(f, fmt.Sprintf("is %v; give a share of one GPU above 0 and below 1, such as 0.5 (leave it out for whole GPUs, and use slots for more than one)", x))
		return
	}
	if m := x * GPUMilli; math.Abs(m-math.Round(m)) > 1e-6 || math.Round(m) < 1 || math.Round(m) >= GPUMilli {
		ps.add(f, fmt.Sprintf("is %v; a share is counted in thousandths of a GPU, so give at most three decimals (0.001 to 0.999)", x))
	}
	if z.Slots > 1 {
		ps.add(f, fmt.Sprintf("is set with slots %d; a share is part of one GPU, so a shared job holds one slot: drop slots, or drop gpu_share to hold %d whole GPUs", z.Slots, z.Slots))
	}
	if z.Replicas > 1 {
		ps.add(f, fmt.Sprintf("is set with replicas %d; a gang's members are placed as whole slots across workers, so they cannot share a GPU: drop gpu_share", z.Replicas))
	}
}

// WholeGPUs is the whole GPUs (or slots) that thousandths of one fill at
// the least: jobs sharing GPUs pack, so their sum rounded up.
func WholeGPUs(milli int64) int { return int((milli + GPUMilli - 1) / GPUMilli) }

// MilliUsed is what a job holding slots, or a share of one GPU in
// thousandths (share > 0), uses, in thousandths of a slot: the one rule by
// which the policy, the simulator, traces and the cost ledger count a
// share at its part and everything else whole.
func MilliUsed(slots, share int) int {
	if share > 0 {
		return share
	}
	return GPUMilli * slots
}

// SlotsUsed is MilliUsed in slots.
func SlotsUsed(slots, share int) float64 { return float64(MilliUsed(slots, share)) / GPUMilli }
