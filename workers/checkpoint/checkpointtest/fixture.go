// Package checkpointtest gives tests outside the checkpoint package a job
// with committed checkpoints in a real store: the CLI, the API and the
// console each list what a worker committed, and each needs the same
// job, saver and directory to list.
package checkpointtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/checkpoints"
	"github.com/ballastdev/ballast/workers/checkpoint"
)

// JobStore is what New needs of the job store: submit a job, claim its
// first attempt, and the kernel the claimant's checkpoint ledger
// (queues/checkpoints) is built on. queues.Store implements it
// (fixture_test.go checks it).
type JobStore interface {
	queues.Kernel
	Submit(ctx context.Context, spec jobs.Spec, q queues.Queue) (queues.Submitted, error)
	Claim(ctx context.Context, d queues.Delivery, worker string) (jobs.Job, bool, error)
}

// Fixture is a job's first attempt, claimed by worker "w1", and a saver
// committing its checkpoint directory to a store through the job record.
type Fixture struct {
	Job   jobs.Job
	Store *checkpoint.Store
	Saver *checkpoint.Saver
	// Dir is the job's checkpoint directory; it starts with a file
	// "weights" of the size New was given.
	Dir string
}

// New submits a core job to store, claims its first attempt on w1, opens
// the checkpoint store at url (closed when the test ends) and makes a
// saver that keeps keep commits.
func New(t testing.TB, store JobStore, url string, keep, weights int) *Fixture {
	t.Helper()
	ctx := context.Background()
	sub, err := store.Submit(ctx, jobs.Spec{Command: []string{"true"}, Class: jobs.ClassCore, Rhythm: jobs.RhythmPeriodic,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	j, ok, err := store.Claim(ctx, queues.Delivery{JobID: sub.Job.ID, Attempt: 1}, "w1")
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	ck, err := checkpoint.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ck.Close() })
	saver, err := checkpoint.NewSaver(ck, checkpoints.New(store).Ledger("w1"), j.ID, j.Attempt, nil, checkpoint.Options{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "weights"), make([]byte, weights), 0o600); err != nil {
		t.Fatal(err)
	}
	return &Fixture{Job: j, Store: ck, Saver: saver, Dir: dir}
}

// Save writes step as the file "step" and commits the directory under
// token.
func (f *Fixture) Save(t testing.TB, token string, step []byte) *checkpoint.Saved {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.Dir, "step"), step, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := f.Saver.Save(context.Background(), f.Dir, token)
	if err != nil {
		t.Fatalf("save %s: %v", token, err)
	}
	return s
}
