package timespan

import (
	"testing"
	"time"
)

func TestEarlierAndLater(t *testing.T) {
	a := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	b := a.Add(time.Second)
	if Earlier(a, b) != a || Earlier(b, a) != a || Later(a, b) != b || Later(b, a) != b {
		t.Fatal("Earlier or Later picks the wrong instant")
	}
	// The same instant in another zone is equal: the second argument wins.
	c := a.In(time.FixedZone("x", 3600))
	if Earlier(a, c).Location() != c.Location() || Later(c, a).Location() != time.UTC {
		t.Fatal("on equal instants the second argument is not kept")
	}
}
