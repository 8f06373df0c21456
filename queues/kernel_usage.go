package queues

import (
	"strconv"
	"strings"
	"time"
)

// What the usage store (queues/usage) shares with the kernel. The kernel's
// scripts write into usage's keys in the same step as the job or worker
// change they account for: the end of an attempt adds its usage entry, and
// a worker's first heartbeat, its clean stop and its recovery open and
// close its life. So the kernel and queues/usage name the same keys (built
// in keys.go) and read the same life members.

// Usage is the sorted set of one entry per ended attempt, scored by the
// attempt's end (see usageLua).
func (n Namespace) Usage() string { return n.usage() }

// Lives is the sorted set of worker lives, scored by their start.
func (n Namespace) Lives() string { return n.lives() }

// LivesEnd holds the end (ms) of each ended life, by its member in Lives.
func (n Namespace) LivesEnd() string { return n.livesEnd() }

// Launches holds the elastic launches whose worker has not registered yet.
func (n Namespace) Launches() string { return n.launches() }

// Series is the sorted set of the samples of the measured series name.
func (n Namespace) Series(name string) string { return n.series(name) }

// Life is one member of Lives as the scripts write it:
// "startMs|pool|slots|id", so the sorted set alone says what each life
// was. The ID goes last: pool names cannot hold "|" (the config refuses
// them), worker IDs are not checked for it. A pending launch is
// "startMs|pool|slots" under its ID.
type Life struct {
	ID    string
	Pool  string
	Slots int
	Start time.Time
}

// ParseLife reads a member of Lives; ok is false for one no script wrote.
func ParseLife(m string) (l Life, ok bool) {
	parts := strings.SplitN(m, "|", 4)
	if len(parts) != 4 {
		return Life{}, false
	}
	ms, err1 := strconv.ParseInt(parts[0], 10, 64)
	slots, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil {
		return Life{}, false
	}
	return Life{ID: parts[3], Pool: parts[1], Slots: slots, Start: msUTC(ms)}, true
}
