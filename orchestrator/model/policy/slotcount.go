package policy

// slotCount is queued work bound for the fixed quota, counted as the
// index counts it: whole slots, plus shares of a GPU in thousandths. The
// shares pack, so they turn into slots only when read, as their sum
// rounded up. A rule that moved a share as a whole slot would count it
// one way this tick and another way the next, and plan again what it
// just planned.
type slotCount struct {
	whole int
	milli int64
}

// slots is the count in slots.
func (c slotCount) slots() int { return c.whole + wholeOf(c.milli) }

// add counts job j in; its slots, or its share.
func (c *slotCount) add(j *Job) {
	if j.Share > 0 {
		c.milli += int64(j.Share)
		return
	}
	c.whole += j.weight()
}

// sub counts job j out again and returns how many slots that freed: a
// share frees a slot only when the others no longer fill it.
func (c *slotCount) sub(j *Job) int {
	before := c.slots()
	if j.Share > 0 {
		c.milli -= int64(j.Share)
	} else {
		c.whole -= j.weight()
	}
	return before - c.slots()
}

// plus is the count of both.
func (c slotCount) plus(o slotCount) slotCount {
	return slotCount{whole: c.whole + o.whole, milli: c.milli + o.milli}
}

// with is the count with job j in as well.
func (c slotCount) with(j *Job) slotCount {
	c.add(j)
	return c
}
