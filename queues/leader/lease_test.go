package leader_test

import (
	"context"
	"testing"
	"time"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/leader"
)

// newLease returns the lease of a namespace of the test's own.
func newLease(t *testing.T) *leader.Store {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	return leader.New(queues.NewStore(rdb, queues.StoreOptions{Namespace: ns}))
}

func TestLeadership(t *testing.T) {
	t.Parallel()
	s := newLease(t)
	ctx := context.Background()
	if l, err := s.Holder(ctx); err != nil || l != "" {
		t.Fatalf("holder of an empty lease = %q, %v; want none", l, err)
	}
	if ok, _ := s.Acquire(ctx, "a", time.Second); !ok {
		t.Fatal("a could not lead an empty lease")
	}
	if ok, _ := s.Acquire(ctx, "b", time.Second); ok {
		t.Fatal("b took a held lease")
	}
	if ok, _ := s.Acquire(ctx, "a", time.Second); !ok {
		t.Fatal("a could not renew")
	}
	// Only the holder can give it up.
	if err := s.Resign(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.Holder(ctx); l != "a" {
		t.Fatalf("b's resignation moved the lease to %q", l)
	}
	if err := s.Resign(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Acquire(ctx, "b", time.Second); !ok {
		t.Fatal("b could not lead after a resigned")
	}
	if l, _ := s.Holder(ctx); l != "b" {
		t.Fatalf("leader %q", l)
	}
}

// TestLeaseRunsOut: a leader that stops renewing loses the lease after its
// ttl, so a standby takes over from a crashed controller.
func TestLeaseRunsOut(t *testing.T) {
	t.Parallel()
	s := newLease(t)
	ctx := context.Background()
	if ok, _ := s.Acquire(ctx, "a", 100*time.Millisecond); !ok {
		t.Fatal("a could not lead an empty lease")
	}
	testenv.Eventually(t, 5*time.Second, "b to lead after a's lease ran out", func() bool {
		ok, err := s.Acquire(ctx, "b", time.Second)
		return err == nil && ok
	})
}
