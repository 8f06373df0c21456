package policy

import (
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
)

// SetTeamUsage sets each team's decayed fixed-slot usage, as
// Snapshot.TeamUsage: the caller (controller or simulator) keeps a
// shares.Decayed and hands its Usage over before each Decide. The index
// keeps the map as given and never writes it.
func (ix *Index) SetTeamUsage(u map[string]float64) { ix.teamUsage = u }

// TeamUsage returns what SetTeamUsage set, for the rules of team shares.
func (ix *Index) TeamUsage() map[string]float64 { return ix.teamUsage }

// FixedTeamUse is what each team's jobs hold on fixed workers that are
// up, in slots (a GPU share at its share, as rule 9 counts it), and those
// workers' slots. The controller's share metrics and decayed usage read
// it every tick: it walks the workers the index keeps instead of copying
// every job into a snapshot.
func (ix *Index) FixedTeamUse() (used map[string]float64, slots int) {
	used = map[string]float64{}
	for _, w := range ix.sorted {
		if w.pool.Kind != PoolFixed || w.State != WorkerUp {
			continue
		}
		slots += max(w.Slots, 0)
		for _, j := range w.jobs {
			if j.Team != "" {
				used[j.Team] += float64(j.milliSlots()) / 1000
			}
		}
	}
	return used, slots
}

// CoreWaits counts, per team, the core jobs queued in held or core and
// when the longest-waiting of them was queued.
func (ix *Index) CoreWaits() map[string]shares.Wait {
	out := map[string]shares.Wait{}
	for j := range merged(false, append(ix.queues(QueueHeld), ix.queues(QueueCore)...)...) {
		if j.Team == "" || j.Class != jobs.ClassCore {
			continue
		}
		w := out[j.Team]
		w.Add(j.QueuedAt)
		out[j.Team] = w
	}
	return out
}
