package shares

import (
	"math"
	"time"
)

// Decayed is each team's fixed-slot usage, in slot-seconds, decayed with
// a half-life: recent use counts fully, use a half-life ago half. It
// breaks ties between borrowers the way Slurm's fair-share does, so a
// team that borrowed heavily yesterday yields to one that did not. The
// owner (controller or simulator) calls Add once per tick; time comes in.
type Decayed struct {
	HalfLife time.Duration
	at       time.Time
	usage    map[string]float64
}

// Add decays what is recorded to now and adds used slots held since the
// last call (by each team, for the time since then).
func (d *Decayed) Add(now time.Time, used map[string]float64) {
	if d.usage == nil {
		d.usage = map[string]float64{}
	}
	if !d.at.IsZero() && now.After(d.at) {
		dt := now.Sub(d.at).Seconds()
		hl := d.HalfLife
		if hl <= 0 {
			hl = 24 * time.Hour
		}
		f := math.Exp2(-dt / hl.Seconds())
		for k := range d.usage {
			d.usage[k] *= f
		}
		for k, u := range used {
			d.usage[k] += u * dt
		}
	}
	if now.After(d.at) {
		d.at = now
	}
}

// Usage returns a copy of the decayed usage by team.
func (d *Decayed) Usage() map[string]float64 {
	out := make(map[string]float64, len(d.usage))
	for k, v := range d.usage {
		out[k] = v
	}
	return out
}
