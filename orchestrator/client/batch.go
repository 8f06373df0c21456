package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ballastdev/ballast/internal/spread"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// batchKind is a batch on the job subject and route: the intake tells a
// batch from one job by its JSON array.
var batchKind = kind[[]jobs.Submission, intake.BatchReceipt]{
	op: "client.SubmitBatch", noun: "batch",
	subject: events.Subjects.Submit, path: intake.SubmitPath,
	id: func(r intake.BatchReceipt) string {
		if len(r.Results) == 0 {
			return ""
		}
		return "results"
	},
	decode: decodeBatchReceipt,
}

// decodeBatchReceipt is json.Unmarshal of the reply to a batch, whose
// results are read on all cores when the reply has the form the intake
// gives it: the caller waits for this part of a large batch.
func decodeBatchReceipt(data []byte, r *intake.BatchReceipt) error {
	const head = `{"results":`
	if len(data) < 1<<14 || !bytes.HasPrefix(data, []byte(head)) || !bytes.HasSuffix(data, []byte("}")) {
		return json.Unmarshal(data, r)
	}
	elems, ok := jobs.SplitArray(data[len(head) : len(data)-1])
	if !ok {
		return json.Unmarshal(data, r)
	}
	res := make([]intake.BatchResult, len(elems))
	errs := make([]error, len(elems))
	spread.Each(len(elems), func(i int) {
		var ok bool
		if res[i], ok = parseResult(elems[i]); !ok {
			errs[i] = json.Unmarshal(elems[i], &res[i])
		}
	})
	for _, err := range errs {
		if err != nil {
			return json.Unmarshal(data, r) // for the error of the whole
		}
	}
	r.Results = res
	return nil
}

// SubmitBatch submits subs in as few requests as fit in the server's
// max_payload, and returns one result per submission, in order: a receipt,
// or the error that kept that one job from being recorded. A submission
// without an idempotency key gets a random one first, written into subs,
// so a retried request never records a job twice and the caller can send
// the same subs again after an error to find the jobs already recorded.
// The error is for the call as a whole (an invalid batch, naming each
// problem by index; the intake unreachable): the results of the parts
// before the one that failed are returned with it. Parts travel a few at
// once, so jobs of parts after it may be recorded too (sending the same
// subs again finds them), and the jobs of a batch larger than one part
// are not queued strictly in the batch's order across its parts.
func (c *NATS) SubmitBatch(ctx context.Context, subs []jobs.Submission) ([]intake.BatchResult, error) {
	if c == nil || c.nc == nil {
		return nil, errors.New("client.SubmitBatch: no NATS connection")
	}
	// Headers and the reply subject also travel in the message.
	maxBytes := int(c.nc.MaxPayload()) - 1024
	return submitBatch(ctx, c.Options.WithDefaults(), subs, intake.MaxNATSBatch(c.nc.MaxPayload()), maxBytes, natsTry(c, batchKind))
}

// SubmitBatch is NATS.SubmitBatch over HTTP, in requests of up to
// jobs.MaxBatchJobs jobs and jobs.MaxBatchBytes.
func (c *HTTP) SubmitBatch(ctx context.Context, subs []jobs.Submission) ([]intake.BatchResult, error) {
	if c == nil || c.base == "" {
		return nil, errors.New("client.SubmitBatch: no base URL")
	}
	return submitBatch(ctx, c.Options.WithDefaults(), subs, jobs.MaxBatchJobs, jobs.MaxBatchBytes, httpTry(c, batchKind))
}

func submitBatch(ctx context.Context, o Options, subs []jobs.Submission, maxJobs, maxBytes int, try tryFunc[intake.BatchReceipt]) ([]intake.BatchResult, error) {
	for i := range subs {
		if subs[i].IdempotencyKey == "" {
			subs[i].IdempotencyKey = newKey()
		}
	}
	encoded, errs := encodeAll(subs)
	for i, b := range encoded {
		if errs[i] != nil {
			return nil, fmt.Errorf("client.SubmitBatch: encoding job %d: %w", i, errs[i])
		}
		if len(b)+2 > maxBytes || len(b) > jobs.MaxSubmissionBytes {
			return nil, fmt.Errorf("client.SubmitBatch: %w", &Error{Code: intake.CodeTooLarge, Message: "a job of the batch is too large",
				Problems: []*jobs.FieldError{{Field: fmt.Sprintf("[%d]", i), Message: fmt.Sprintf("the job is %d bytes; the limit is %d (send large inputs by reference, e.g. a path or URL parameter)",
					len(b), min(maxBytes-2, jobs.MaxSubmissionBytes))}}})
		}
	}
	var parts [][2]int
	for lo := 0; lo < len(subs); {
		hi, size, most := lo, 2, maxJobs
		if lo == 0 && len(subs) > maxJobs {
			// The first of several parts is small: the intake reads and
			// validates a part whole before it records any of it, and
			// meanwhile its Redis has nothing to do.
			most = min(maxJobs, firstPartJobs)
		}
		for hi < len(subs) && hi-lo < most && size+len(encoded[hi])+1 <= maxBytes {
			size += len(encoded[hi]) + 1
			hi++
		}
		parts = append(parts, [2]int{lo, hi})
		lo = hi
	}
	out := make([]intake.BatchResult, len(subs))
	partErrs := make([]error, len(parts))
	var failed atomic.Bool
	// Parts go a few at once: sent one after another, the intake's Redis
	// would idle while each part travels, is decoded and is validated, and
	// while its reply is encoded and read. Each part writes only its own
	// results.
	inFlight := make(chan struct{}, partsInFlight)
	var wg sync.WaitGroup
	for k, p := range parts {
		inFlight <- struct{}{}
		if failed.Load() {
			// Not sent: an earlier part failed, and the caller resends
			// from there.
			break
		}
		wg.Go(func() {
			defer func() { <-inFlight }()
			if partErrs[k] = sendPart(ctx, o, encoded, p[0], p[1], out, try); partErrs[k] != nil {
				failed.Store(true)
			}
		})
	}
	wg.Wait()
	for k, err := range partErrs {
		if err != nil {
			return out[:parts[k][0]], err
		}
	}
	return out, nil
}

// partsInFlight is how many parts of one batch are on their way at once:
// enough that the intake records one while it reads the next (a batch of
// jobs.MaxBatchJobs at NATS's default 1 MB max_payload goes at once), few
// enough that a batch does not hold many max_payloads in memory on either
// side.
const partsInFlight = 4

// firstPartJobs bounds the first part of a batch that needs several.
const firstPartJobs = 256

// encodeAll is the JSON of each submission, encoded on all cores: a long
// list is otherwise encoded on one while the intake waits for it.
func encodeAll(subs []jobs.Submission) ([][]byte, []error) {
	encoded := make([][]byte, len(subs))
	errs := make([]error, len(subs))
	// A submission is about 100 to 200 bytes: room for that at once, not
	// grown to it.
	spread.Each(len(subs), func(i int) { encoded[i], errs[i] = subs[i].AppendJSON(make([]byte, 0, 192)) })
	return encoded, errs
}

// sendPart sends subs[lo:hi] and fills out[lo:hi]. Jobs the store could not
// record for want of Redis are sent again, within o's retries: their keys
// make that safe.
func sendPart(ctx context.Context, o Options, encoded [][]byte, lo, hi int, out []intake.BatchResult, try tryFunc[intake.BatchReceipt]) error {
	pending := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		pending = append(pending, i)
	}
	for round := 0; ; round++ {
		body := batchBody(encoded, pending)
		// The intake gives a batch its timeout once per thousand jobs; a
		// try that gave up sooner would resend a batch still being
		// recorded.
		po := o
		po.Timeout = o.Timeout * time.Duration(1+len(pending)/1000)
		r, err := tries(ctx, po, batchKind.op, fmt.Sprintf("jobs %d to %d; resubmit them with their idempotency keys to find them", lo, hi-1),
			func(ctx context.Context) (intake.BatchReceipt, error) { return try(ctx, body) })
		if err != nil {
			return reindex(err, pending)
		}
		if len(r.Results) != len(pending) {
			return fmt.Errorf("client.SubmitBatch: %d results for %d jobs: the reply is not from this intake", len(r.Results), len(pending))
		}
		var again []int
		for k, i := range pending {
			out[i] = r.Results[k]
			if e := r.Results[k].Error; e != nil && e.Code == intake.CodeUnavailable {
				again = append(again, i)
			}
		}
		if len(again) == 0 || round >= o.Retries {
			return nil
		}
		pending = again
	}
}

// batchBody is the JSON array of the encoded jobs picked.
func batchBody(encoded [][]byte, pick []int) []byte {
	size := 2 + len(pick)
	for _, i := range pick {
		size += len(encoded[i])
	}
	var b bytes.Buffer
	b.Grow(size)
	b.WriteByte('[')
	for k, i := range pick {
		if k > 0 {
			b.WriteByte(',')
		}
		b.Write(encoded[i])
	}
	b.WriteByte(']')
	return b.Bytes()
}

// reindex rewrites the "[k]" field names of an invalid part as indexes of
// the whole batch, so that they name the caller's own submissions.
func reindex(err error, pick []int) error {
	var ce *Error
	if !errors.As(err, &ce) {
		return err
	}
	for _, p := range ce.Problems {
		head, rest, ok := strings.Cut(p.Field, "]")
		if !ok || !strings.HasPrefix(head, "[") {
			continue
		}
		if k, err := strconv.Atoi(head[1:]); err == nil && k >= 0 && k < len(pick) {
			p.Field = fmt.Sprintf("[%d]%s", pick[k], rest)
		}
	}
	return err
}

// MaxPayload is the largest message the connected NATS server takes; a
// batch is split into messages of at most that size.
func (c *NATS) MaxPayload() int64 { return c.nc.MaxPayload() }
