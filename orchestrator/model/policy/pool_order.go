package policy

import "cmp"

// ComparePools orders elastic pools the way work looks for capacity
// (rules 3, 7 and 8, and the simulator's workers): the cheapest per
// slot-hour first. At one price the pool of smaller machines comes first:
// a machine is billed whole while any job runs on it, so work that fits a
// small one leaves a large one's other slots paid and empty, and a job
// that outlives its neighbours keeps them so (for non-checkpointable work,
// until it ends). Work too big for the small machines still finds the
// large ones, since every rule skips a pool whose machines cannot hold
// the job. Then by name, so that every tick and every controller after a
// restart agree.
func ComparePools(a, b *Pool) int {
	return cmp.Or(cmp.Compare(a.PricePerSlotHour, b.PricePerSlotHour),
		cmp.Compare(a.SlotsPerWorker, b.SlotsPerWorker), cmp.Compare(a.Name, b.Name))
}
