package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/hibiken/asynq"
	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// DefaultNATSURL is the NATS server of the submission phase.
const DefaultNATSURL = "nats://127.0.0.1:4222"

// submitTemplate is the catalog template every job of the submission phase
// names.
const submitTemplate = "bench.submit"

// Submission is the submission phase: the same number of jobs submitted
// the way users do, through the NATS intake in front of a
// controller.Submitter, once one request per job from the producers and
// once in batches of up to jobs.MaxBatchJobs. Only submitting is timed:
// no worker runs the jobs.
type Submission struct {
	NATSURL string
	// Namespace is the phase's own, purged when it ends.
	Namespace string
	// BatchSize is the most jobs one SubmitBatch call carries (the client
	// splits it further to fit the server's max_payload).
	BatchSize int
	// Single and Batch run from the first submit call to the last reply;
	// Count is the jobs submitted.
	Single Throughput
	Batch  Throughput
	// Ratio is Batch.PerSecond over Single.PerSecond.
	Ratio float64
	// Recorded is how many job records the store holds after both runs,
	// and Tasks how many asynq tasks wait for them: each is Single.Count +
	// Batch.Count when every job was recorded once.
	Recorded int
	Tasks    int
}

// submission runs the submission phase in a namespace of its own, which it
// purges before it returns.
func (b *bench) submission(ctx context.Context) (Submission, error) {
	n := cmp.Or(b.opts.SubmissionJobs, jobs.MaxBatchJobs)
	res := Submission{NATSURL: cmp.Or(b.opts.NATSURL, DefaultNATSURL), BatchSize: jobs.MaxBatchJobs}
	ns := b.ns + "sub"
	res.Namespace = ns
	store := queues.NewStore(b.rdb, queues.StoreOptions{Namespace: ns})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = queues.PurgeNamespace(ctx, b.rdb, ns)
	}()
	cat, err := jobs.NewCatalog(map[string]jobs.Template{submitTemplate: {Command: []string{"true"}, Class: jobs.ClassBurst,
		Params: map[string]jobs.ParamSpec{"i": {Type: jobs.ParamInt, Required: true}}}})
	if err != nil {
		return res, fmt.Errorf("bench: %w", err)
	}
	// Three connections, as three processes would have: the controller's
	// intake, its event publisher, and the user's client.
	conns := make([]*nats.Conn, 3)
	for i := range conns {
		if conns[i], err = nats.Connect(res.NATSURL, nats.Name("ballast-bench")); err != nil {
			return res, fmt.Errorf("bench: NATS at %s: %w: %v (start one, or pass --no-submission)", res.NATSURL, jobs.ErrUnavailable, err)
		}
		defer conns[i].Close()
	}
	subj := events.Subjects{Prefix: ns}
	sub := &controller.Submitter{Catalog: cat, Store: store, Router: controller.Router{ElasticManaged: true},
		Events: eventbus.NewNATSPublisher(conns[1], subj), Logger: b.log}
	in, err := intake.NewNATSServer(conns[0], sub, intake.NATSOptions{Subjects: subj, Logger: b.log})
	if err != nil {
		return res, fmt.Errorf("bench: %w", err)
	}
	if err := in.Start(ctx); err != nil {
		return res, fmt.Errorf("bench: %w", err)
	}
	defer in.Stop()
	c := client.NewNATS(conns[2], subj)
	submission := func(run string, i int) jobs.Submission {
		return jobs.Submission{Template: submitTemplate, Params: map[string]json.RawMessage{"i": json.RawMessage(fmt.Sprint(i))},
			IdempotencyKey: fmt.Sprintf("%s-%d", run, i)}
	}
	ids := make(map[string]bool, 2*n)
	record := func(what string, i int, r intake.Receipt) error {
		switch {
		case r.JobID == "":
			return fmt.Errorf("bench: %s job %d: no job ID in the receipt", what, i)
		case r.Duplicate:
			return fmt.Errorf("bench: %s job %d: taken for a duplicate of %s", what, i, r.JobID)
		case ids[r.JobID]:
			return fmt.Errorf("bench: %s job %d: job %s was given out twice", what, i, r.JobID)
		}
		ids[r.JobID] = true
		return nil
	}

	fmt.Fprintf(b.out, "submission: %d jobs over NATS, one request each from %d producers...\n", n, b.opts.Producers)
	single := make([]intake.Receipt, n) // each producer writes only its own indexes
	before := Sample(ctx, b.rdb)
	start := time.Now()
	if err := produce(ctx, n, b.opts.Producers, func(ctx context.Context, i int) error {
		r, err := c.Submit(ctx, submission("single", i))
		single[i] = r
		return err
	}); err != nil {
		return res, fmt.Errorf("bench: single submissions: %w", err)
	}
	res.Single = throughput(n, time.Since(start))
	res.Single.Usage = Sample(ctx, b.rdb).Minus(before)
	for i, r := range single {
		if err := record("single", i, r); err != nil {
			return res, err
		}
	}

	fmt.Fprintf(b.out, "submission: the same in batches of up to %d...\n", res.BatchSize)
	subs := make([]jobs.Submission, n)
	for i := range subs {
		subs[i] = submission("batch", i)
	}
	var batch []intake.BatchResult
	before = Sample(ctx, b.rdb)
	start = time.Now()
	for lo := 0; lo < n; lo += res.BatchSize {
		part, err := c.SubmitBatch(ctx, subs[lo:min(lo+res.BatchSize, n)])
		if err != nil {
			return res, fmt.Errorf("bench: batch submission of jobs %d on: %w", lo, err)
		}
		batch = append(batch, part...)
	}
	res.Batch = throughput(n, time.Since(start))
	res.Batch.Usage = Sample(ctx, b.rdb).Minus(before)
	if len(batch) != n {
		return res, fmt.Errorf("bench: %d batch results for %d jobs", len(batch), n)
	}
	for i, r := range batch {
		if r.Error != nil {
			return res, fmt.Errorf("bench: batch job %d: %s: %s", i, r.Error.Code, r.Error.Message)
		}
		if err := record("batch", i, *r.Receipt); err != nil {
			return res, err
		}
	}
	if res.Single.PerSecond > 0 {
		res.Ratio = res.Batch.PerSecond / res.Single.PerSecond
	}

	recorded, err := b.rdb.ZCard(ctx, store.Namespace().JobIndex()).Result()
	if err != nil {
		return res, fmt.Errorf("bench: counting the jobs recorded: %w", err)
	}
	res.Recorded = int(recorded)
	q, err := asynq.NewInspectorFromRedisClient(b.rdb).GetQueueInfo(store.Namespace().AsynqQueue(queues.Queue(single[0].Queue)))
	if err != nil {
		return res, fmt.Errorf("bench: counting the tasks enqueued: %w", err)
	}
	res.Tasks = q.Pending
	if res.Recorded != 2*n || res.Tasks != 2*n {
		return res, fmt.Errorf("bench: %d jobs submitted, but %d records and %d tasks are in the store", 2*n, res.Recorded, res.Tasks)
	}
	fmt.Fprintf(b.out, "submission: single %.0f jobs/s, batch %.0f jobs/s\n", res.Single.PerSecond, res.Batch.PerSecond)
	return res, nil
}

// print writes the phase's table, or nothing when it did not run.
func (s Submission) print(w io.Writer) {
	if s.Single.Count == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "submission over NATS (%s)\tjobs\telapsed\tper second\n", s.NATSURL)
	fmt.Fprintf(tw, "  one request per job\t%d\t%s\t%.0f\n", s.Single.Count, s.Single.Elapsed.Round(time.Millisecond), s.Single.PerSecond)
	fmt.Fprintf(tw, "  batches of up to %d\t%d\t%s\t%.0f\n", s.BatchSize, s.Batch.Count, s.Batch.Elapsed.Round(time.Millisecond), s.Batch.PerSecond)
	fmt.Fprintf(tw, "  ratio batch / single\t\t\t%.2f\n", s.Ratio)
	tw.Flush()
	// The NATS server's own CPU is not in these: it is another process.
	fmt.Fprintf(w, "cpu per job, single: redis %.1f µs, this process %.1f µs (client and intake); batch: redis %.1f µs, this process %.1f µs\n",
		s.Single.perMicros(s.Single.Usage.RedisCPU), s.Single.perMicros(s.Single.Usage.ClientCPU),
		s.Batch.perMicros(s.Batch.Usage.RedisCPU), s.Batch.perMicros(s.Batch.Usage.ClientCPU))
	verdict := "each job once"
	if s.Recorded != s.Single.Count+s.Batch.Count || s.Tasks != s.Recorded {
		verdict = fmt.Sprintf("!!! want %d of each", s.Single.Count+s.Batch.Count)
	}
	fmt.Fprintf(w, "(%d job records and %d tasks in the store: %s)\n\n", s.Recorded, s.Tasks, verdict)
}
