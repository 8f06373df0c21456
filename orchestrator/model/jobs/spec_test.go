package jobs

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

var idRE = regexp.MustCompile(`^[0-9a-f]{28}$`)

func TestNewIDFormat(t *testing.T) {
	now := time.Date(2025, 3, 14, 15, 9, 26, 535_000_000, time.UTC)
	id := NewID(now)
	if !idRE.MatchString(id) {
		t.Fatalf("NewID = %q, want 28 lower-case hex digits", id)
	}
	if prefix := fmt.Sprintf("%012x", now.UnixMilli()); id[:12] != prefix {
		t.Errorf("NewID prefix = %q, want the milliseconds %q", id[:12], prefix)
	}
	if epoch := NewID(time.UnixMilli(0)); epoch[:12] != "000000000000" || !idRE.MatchString(epoch) {
		t.Errorf("NewID(epoch) = %q", epoch)
	}
}

func TestNewIDSortsByTime(t *testing.T) {
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	times := []time.Time{
		time.UnixMilli(0),
		time.UnixMilli(15), // 0x00f
		time.UnixMilli(16), // 0x010: a hex digit rolls over
		base,
		base.Add(time.Millisecond),
		base.Add(time.Second),
		base.Add(time.Hour),
		base.AddDate(1, 0, 0),
		time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	ids := make([]string, len(times))
	for i, ti := range times {
		ids[i] = NewID(ti)
		if len(ids[i]) != 28 {
			t.Fatalf("NewID(%s) = %q: %d characters", ti, ids[i], len(ids[i]))
		}
	}
	for i := 1; i < len(ids); i++ {
		if ids[i-1] >= ids[i] {
			t.Errorf("NewID(%s) = %s does not sort before NewID(%s) = %s", times[i-1], ids[i-1], times[i], ids[i])
		}
	}
}

func TestNewIDUnique(t *testing.T) {
	const n = 10000
	now := time.Now() // the same millisecond: only the random part differs
	seen := make(map[string]bool, n)
	ids := make([]string, 0, n)
	for range n {
		id := NewID(now)
		if !idRE.MatchString(id) {
			t.Fatalf("NewID = %q, want 28 lower-case hex digits", id)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %s after %d calls", id, len(ids))
		}
		seen[id] = true
		ids = append(ids, id)
	}
	// With real, increasing time the IDs come out sorted at millisecond resolution.
	prev := NewID(time.Now())
	for range 100 {
		next := NewID(time.Now())
		if next[:12] < prev[:12] {
			t.Fatalf("time prefix went backwards: %s then %s", prev, next)
		}
		prev = next
	}
	sort.Strings(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i][:12] != ids[0][:12] {
			t.Fatalf("IDs made at one instant have different time prefixes: %s, %s", ids[0], ids[i])
		}
	}
}

func TestOwnMaxWait(t *testing.T) {
	q := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	d := func(v time.Duration) *Duration { x := Duration(v); return &x }
	global := 30 * time.Minute
	for _, c := range []struct {
		name string
		spec Spec
		want time.Duration
		has  bool
	}{
		{"none: the global applies", Spec{}, global, false},
		{"the template's or step's own", Spec{CoreMaxWait: d(5 * time.Minute)}, 5 * time.Minute, true},
		{"zero is at once", Spec{CoreMaxWait: d(0)}, 0, true},
		{"a latest start alone", Spec{StartBy: q.Add(10 * time.Minute)}, 10 * time.Minute, true},
		{"the sooner of the two", Spec{CoreMaxWait: d(time.Hour), StartBy: q.Add(10 * time.Minute)}, 10 * time.Minute, true},
		{"an own wait sooner than the deadline's", Spec{CoreMaxWait: d(time.Minute), StartBy: q.Add(10 * time.Minute)}, time.Minute, true},
		{"a latest start already past is at once", Spec{StartBy: q.Add(-time.Minute)}, 0, true},
		// A deadline only makes a job overflow sooner: a latest start
		// further away than the global wait leaves the global in force.
		{"a latest start later than the global wait", Spec{StartBy: q.Add(2 * time.Hour)}, global, true},
	} {
		got, has := c.spec.OwnMaxWait(q, global)
		if got != c.want || has != c.has {
			t.Errorf("%s: OwnMaxWait = %v, %v; want %v, %v", c.name, got, has, c.want, c.has)
		}
	}
}

// TestNewIDIsTheFormattedTime: the ID's first 12 digits are exactly fmt's
// "%012x" of the milliseconds, from the epoch to beyond 12 digits' reach.
func TestNewIDIsTheFormattedTime(t *testing.T) {
	for _, ms := range []int64{0, 1, 0xabc, 1700000000123, 0xffffffffffff, 0x1000000000000} {
		id := NewID(time.UnixMilli(ms))
		want := fmt.Sprintf("%012x", ms)
		if !strings.HasPrefix(id, want) || len(id) != len(want)+16 {
			t.Errorf("NewID(%d ms) = %q, want %q and 16 random digits", ms, id, want)
		}
	}
}
