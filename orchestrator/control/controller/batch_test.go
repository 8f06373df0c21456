package controller_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/internal/tools/bench"
	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// batchRig is a real NATS intake in front of a Submitter on a real Redis.
type batchRig struct {
	store  *queues.Store
	client *client.NATS
	events *testenv.EventLog
	ns     string
}

func newBatchRig(t testing.TB) batchRig { return newBatchRigWith(t, true) }

// newBatchRigWith collects the rig's events when collect is set; the
// benchmark leaves that cost out.
func newBatchRigWith(t testing.TB, collect bool) batchRig {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	store := queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	cat, err := jobs.NewCatalog(map[string]jobs.Template{
		"trial": {Command: []string{"true"}, Class: jobs.ClassBurst,
			Params: map[string]jobs.ParamSpec{"lr": {Type: jobs.ParamFloat, Required: true, Min: ptrF(0), Max: ptrF(1)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := testenv.NATS(t)
	subj := events.Subjects{Prefix: ns}
	pubNC := testenv.NATSConn(t, srv)
	sub := &controller.Submitter{Catalog: cat, Store: store, Router: controller.Router{ElasticManaged: true},
		Events: eventbus.NewNATSPublisher(pubNC, subj), Logger: quiet}
	in, err := intake.NewNATSServer(testenv.NATSConn(t, srv), sub, intake.NATSOptions{Subjects: subj, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(in.Stop)
	cnc := testenv.NATSConn(t, srv)
	r := batchRig{store: store, client: client.NewNATS(cnc, subj), ns: ns}
	if collect {
		r.events = testenv.CollectEvents(t, cnc, subj.All())
	}
	return r
}

func ptrF(v float64) *float64 { return &v }

func trialSub(i int, key string) jobs.Submission {
	lr, _ := json.Marshal(float64(i%100) / 100)
	return jobs.Submission{Template: "trial", Params: map[string]json.RawMessage{"lr": lr}, IdempotencyKey: key}
}

// TestBatchSubmitOverNATS: a batch larger than one NATS message holds is
// split by the client, recorded whole with one task per job (asynq sees
// them all), announced, and answered in order; resent with the same keys
// it finds the same jobs; with one invalid job in a batch nothing of that
// batch is recorded and the problem is named by its index in the caller's
// list. (A list split into several messages is validated message by
// message.)
func TestBatchSubmitOverNATS(t *testing.T) {
	t.Parallel()
	r := newBatchRig(t)
	ctx := context.Background()
	const n = 7500 // over one NATS message's worth at the default 1 MB
	subs := make([]jobs.Submission, n)
	for i := range subs {
		subs[i] = trialSub(i, fmt.Sprintf("b-%d", i))
	}
	res, err := r.client.SubmitBatch(ctx, subs)
	if err != nil || len(res) != n {
		t.Fatalf("SubmitBatch: %d results, %v", len(res), err)
	}
	ids := map[string]bool{}
	for i, x := range res {
		if x.Error != nil || x.Receipt == nil || x.Duplicate || x.State != jobs.StateQueued || x.Queue != res[0].Queue {
			t.Fatalf("result %d: %+v %+v", i, x.Receipt, x.Error)
		}
		ids[x.JobID] = true
	}
	if len(ids) != n {
		t.Fatalf("%d distinct jobs for %d submissions", len(ids), n)
	}
	j, err := r.store.Get(ctx, res[4321].JobID)
	if err != nil || j.Spec.IdempotencyKey != "b-4321" || j.Spec.Params["lr"] != 0.21 {
		t.Fatalf("job 4321 is %+v (%v): results are not in the submissions' order", j.Spec, err)
	}
	q, err := asynq.NewInspectorFromRedisClient(r.store.Redis()).GetQueueInfo(r.store.Namespace().AsynqQueue(queues.Queue(res[0].Queue)))
	if err != nil || q.Pending != n {
		t.Fatalf("asynq holds %+v (%v), want %d pending tasks", q, err, n)
	}
	testenv.Eventually(t, 10*time.Second, "job.queued of the last job", func() bool {
		return r.events.Any(func(e events.Event) bool { return e.JobID == res[n-1].JobID && e.Type == events.TypeJobQueued })
	})

	again, err := r.client.SubmitBatch(ctx, subs[:100])
	if err != nil || len(again) != 100 || !again[7].Duplicate || again[7].JobID != res[7].JobID {
		t.Fatalf("resent batch: %v; result 7 %+v, want the duplicate of %s", err, again[7].Receipt, res[7].JobID)
	}

	bad := make([]jobs.Submission, 3000) // one NATS message's worth
	if max := intake.MaxNATSBatch(r.client.MaxPayload()); len(bad) > max {
		t.Fatalf("the invalid batch needs %d jobs per message; the server takes %d", len(bad), max)
	}
	for i := range bad {
		bad[i] = trialSub(i, fmt.Sprintf("bad-%d", i))
	}
	bad[2700].Params["lr"] = json.RawMessage("7")
	bad[2711].Template = "tiral"
	_, err = r.client.SubmitBatch(ctx, bad)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != intake.CodeInvalid {
		t.Fatalf("invalid batch: %v", err)
	}
	fields := ""
	for _, p := range ce.Problems {
		fields += p.Field + " "
	}
	if !strings.Contains(fields, "[2700].params.lr") || !strings.Contains(fields, "[2711].template") {
		t.Fatalf("problems name %q, want [2700].params.lr and [2711].template", fields)
	}
	all, err := r.store.List(ctx, queues.ListOptions{Limit: 1000, State: jobs.StateQueued, Scan: 20000})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range all {
		if strings.HasPrefix(j.Spec.IdempotencyKey, "bad-") {
			t.Fatalf("job %s of the invalid part was recorded", j.Spec.IdempotencyKey)
		}
	}
}

// TestBatchPartsInFlightWithAnInvalidOne: the parts of a batch travel
// together, and one invalid part in the middle fails the call, naming the
// job by its index in the caller's list. The results of the parts before
// it come back, those jobs are recorded, and nothing of the invalid part
// is; the caller sends the mended list again, with the same keys, and
// gets every job exactly once: the earlier parts' as duplicates of the
// jobs it was told of.
func TestBatchPartsInFlightWithAnInvalidOne(t *testing.T) {
	t.Parallel()
	r := newBatchRigWith(t, false)
	ctx := context.Background()
	per := intake.MaxNATSBatch(r.client.MaxPayload())
	n := 3 * per // three parts or more at the default 1 MB
	subs := make([]jobs.Submission, n)
	for i := range subs {
		subs[i] = trialSub(i, fmt.Sprintf("p-%d", i))
	}
	badAt := per + per/2
	subs[badAt].Params = map[string]json.RawMessage{"lr": json.RawMessage("7")}
	res, err := r.client.SubmitBatch(ctx, subs)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Code != intake.CodeInvalid || len(ce.Problems) != 1 || ce.Problems[0].Field != fmt.Sprintf("[%d].params.lr", badAt) {
		t.Fatalf("batch with job %d invalid: %v (%+v)", badAt, err, ce)
	}
	// The parts before the invalid one: how the client cut them is its
	// own business, but some came before it.
	before := len(res)
	if before == 0 || before > badAt {
		t.Fatalf("%d results came back with the error, want those of the parts before job %d", before, badAt)
	}
	for i, x := range res {
		if x.Receipt == nil || x.Duplicate {
			t.Fatalf("result %d of the parts before: %+v %+v", i, x.Receipt, x.Error)
		}
	}
	for _, i := range []int{before, badAt} {
		if n, err := r.store.Redis().Exists(ctx, r.store.Namespace().Idempotency(subs[i].IdempotencyKey)).Result(); err != nil || n != 0 {
			t.Fatalf("job %d of the invalid part is recorded (%v)", i, err)
		}
	}

	subs[badAt] = trialSub(badAt, subs[badAt].IdempotencyKey)
	again, err := r.client.SubmitBatch(ctx, subs)
	if err != nil || len(again) != n {
		t.Fatalf("the mended batch: %d results, %v", len(again), err)
	}
	ids := map[string]bool{}
	for i, x := range again {
		if x.Receipt == nil {
			t.Fatalf("mended result %d: %+v", i, x.Error)
		}
		if i < before && (!x.Duplicate || x.JobID != res[i].JobID) {
			t.Fatalf("mended result %d: %+v, want the duplicate of %s", i, x.Receipt, res[i].JobID)
		}
		if i >= before && i <= badAt && x.Duplicate {
			t.Fatalf("mended result %d of the invalid part is a duplicate of %s", i, x.JobID)
		}
		ids[x.JobID] = true
	}
	if len(ids) != n {
		t.Fatalf("%d distinct jobs for %d submissions", len(ids), n)
	}
	recorded, err := r.store.Redis().ZCard(ctx, r.store.Namespace().JobIndex()).Result()
	if err != nil || recorded != int64(n) {
		t.Fatalf("%d job records (%v), want %d: a job was recorded twice or not at all", recorded, err, n)
	}
}

// BenchmarkSubmitSingleVsBatch submits 10,000 jobs over NATS through the
// real intake, once as 10,000 requests from 8 clients at a time and once
// as a batch, and reports jobs per second of each and their ratio.
//
//	go test -run '^$' -bench SubmitSingleVsBatch -benchtime 1x ./orchestrator/control/controller/
func BenchmarkSubmitSingleVsBatch(b *testing.B) {
	const n = 10000
	for range b.N {
		r := newBatchRigWith(b, false)
		ctx := context.Background()
		start := time.Now()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < n; i += 8 {
					if _, err := r.client.Submit(ctx, trialSub(i, fmt.Sprintf("s-%d", i))); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
		single := float64(n) / time.Since(start).Seconds()

		subs := make([]jobs.Submission, n)
		for i := range subs {
			subs[i] = trialSub(i, fmt.Sprintf("m-%d", i))
		}
		start = time.Now()
		if _, err := r.client.SubmitBatch(ctx, subs); err != nil {
			b.Fatal(err)
		}
		batch := float64(n) / time.Since(start).Seconds()
		b.ReportMetric(single, "single-jobs/s")
		b.ReportMetric(batch, "batch-jobs/s")
		b.ReportMetric(batch/single, "ratio")
	}
}

// BenchmarkSubmitBatch submits batches of 10,000 jobs over NATS through
// the real intake, and reports jobs per second and what a job cost: Redis's
// CPU (its whole server's: run it on a Redis of your own, e.g.
// BALLAST_TEST_REDIS=127.0.0.1:6391) and this process's (client, intake
// and the embedded NATS server together).
//
//	go test -run '^$' -bench SubmitBatch$ -benchtime 10x ./orchestrator/control/controller/
func BenchmarkSubmitBatch(b *testing.B) {
	const n = 10000
	r := newBatchRigWith(b, false)
	ctx := context.Background()
	var elapsed time.Duration
	var used bench.Usage
	for it := range b.N {
		b.StopTimer()
		subs := make([]jobs.Submission, n)
		for i := range subs {
			subs[i] = trialSub(i, fmt.Sprintf("b-%d-%d", it, i))
		}
		before, start := bench.Sample(ctx, r.store.Redis()), time.Now()
		b.StartTimer()
		res, err := r.client.SubmitBatch(ctx, subs)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		elapsed += time.Since(start)
		u := bench.Sample(ctx, r.store.Redis()).Minus(before)
		used.RedisCPU += u.RedisCPU
		used.ClientCPU += u.ClientCPU
		for i := range res {
			if res[i].Receipt == nil || res[i].Duplicate {
				b.Fatalf("job %d: %+v", i, res[i])
			}
		}
		b.StartTimer()
	}
	jobsDone := float64(n * b.N)
	b.ReportMetric(jobsDone/elapsed.Seconds(), "jobs/s")
	b.ReportMetric(float64(used.RedisCPU.Microseconds())/jobsDone, "redis-us/job")
	b.ReportMetric(float64(used.ClientCPU.Microseconds())/jobsDone, "process-us/job")
}
