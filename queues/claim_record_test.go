package queues_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestClaimReturnsTheRecord: the job the claim rebuilds from its reply is
// the record as it is on Redis after the claim, for a first attempt and
// for a requeued one with a checkpoint, a metric and an error on record,
// and for the retry of a claim already made ("again").
func TestClaimReturnsTheRecord(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	sub, err := s.Submit(ctx, spec(""), queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got jobs.Job) {
		t.Helper()
		want, err := s.Get(ctx, got.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: claim returned\n %+v\nrecord is\n %+v", what, got, want)
		}
	}
	c := queues.Claimant{Worker: "w", Incarnation: "inc-1", Pool: "p"}
	j, ok, err := s.ClaimBy(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, c)
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	check("first claim", j)
	again, ok, err := s.ClaimBy(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, c)
	if err != nil || !ok {
		t.Fatalf("repeat claim: %v %v", ok, err)
	}
	check("repeat claim", again)
	if _, err := s.Checkpoint(ctx, j, "w", "ck-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReportMetric(ctx, j, "w", 0.5); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Requeue(ctx, j, "w", queues.Requeue{Retry: true, Reason: "boom"}); err != nil {
		t.Fatal(err)
	}
	j2, ok, err := s.ClaimBy(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 2}, c)
	if err != nil || !ok {
		t.Fatalf("claim attempt 2: %v %v", ok, err)
	}
	check("second attempt", j2)
}
