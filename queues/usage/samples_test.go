package usage_test

import (
	"context"
	"testing"
	"time"
)

func TestSamplesAreKeptForTheirWindowInOrder(t *testing.T) {
	t.Parallel()
	_, acct, _ := newStores(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i, v := range []float64{0.5, 0.25, 0.75, 0.5} {
		if err := acct.RecordSample(ctx, "fixed_idle", t0.Add(time.Duration(i)*time.Hour), v, 150*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	got, err := acct.Samples(ctx, "fixed_idle", t0, t0.Add(10*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// The first sample fell out of the 150-minute window when the last came.
	if len(got) != 3 || got[0].Value != 0.25 || got[2].Value != 0.5 || !got[2].At.Equal(t0.Add(3*time.Hour)) {
		t.Fatalf("samples %+v", got)
	}
	if got, _ := acct.Samples(ctx, "fixed_idle", t0.Add(90*time.Minute), t0.Add(150*time.Minute)); len(got) != 1 || got[0].Value != 0.75 {
		t.Fatalf("window [1h30, 2h30]: %+v", got)
	}
}
