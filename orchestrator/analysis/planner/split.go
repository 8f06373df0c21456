package planner

import (
	"fmt"
	"strconv"
	"strings"
)

// Quotas are the quota of each fixed pool of a fleet that buys quota per
// flavor, in the plan's pool order.
type Quotas []PoolQuota

// PoolQuota is one fixed pool's quota.
type PoolQuota struct {
	Pool  string `json:"pool"`
	Slots int    `json:"slots"`
}

// String writes the quotas as Candidate.Split does: "A100=8,T4=4".
func (q Quotas) String() string {
	parts := make([]string, len(q))
	for i, p := range q {
		parts[i] = fmt.Sprintf("%s=%d", p.Pool, p.Slots)
	}
	return strings.Join(parts, ",")
}

// Total is the slots of every pool.
func (q Quotas) Total() int {
	n := 0
	for _, p := range q {
		n += p.Slots
	}
	return n
}

// With returns a copy with pool i's quota set to slots.
func (q Quotas) With(i, slots int) Quotas {
	out := append(Quotas(nil), q...)
	out[i].Slots = slots
	return out
}

// quotasOf reads a Candidate.Split back.
func quotasOf(split string) Quotas {
	var out Quotas
	for part := range strings.SplitSeq(split, ",") {
		name, n, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		slots, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		out = append(out, PoolQuota{Pool: name, Slots: slots})
	}
	return out
}

// splitQuotas is a split as the simulator takes it.
func splitQuotas(split string) map[string]int {
	out := map[string]int{}
	for _, p := range quotasOf(split) {
		out[p.Pool] = p.Slots
	}
	return out
}

// withSplit returns c with its quota split as q.
func (c Candidate) withSplit(q Quotas) Candidate {
	c.Split, c.FixedSlots = q.String(), q.Total()
	return c
}
