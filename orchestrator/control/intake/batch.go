package intake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// BatchSubmitter validates and enqueues many submissions at once. It
// returns a *jobs.ValidationError naming problems by index ("[3].params")
// when any submission is invalid, and then records none; otherwise one
// result per submission, in order.
type BatchSubmitter interface {
	SubmitBatch(ctx context.Context, subs []jobs.Submission) ([]BatchResult, error)
}

// BatchResult is the outcome of one submission of a batch: its receipt, or
// the error that kept it from being recorded (an idempotency conflict, or
// a store outage: retry the batch with the same keys).
type BatchResult struct {
	*Receipt
	Error *Error `json:"error,omitempty"`
}

// BatchReceipt is the reply to an accepted batch.
type BatchReceipt struct {
	Results []BatchResult `json:"results"`
}

// WireError is the wire form of an error from recording one submission of
// a noun ("job" or "sweep"), as a reply would carry it.
func WireError(err error, noun string, log *slog.Logger) Error {
	if log == nil {
		log = slog.Default()
	}
	return wireError(err, noun, log)
}

// batchReplyBytes bounds the reply to one job of a batch: a receipt with
// a 28-digit ID and the longest queue name, or a per-job error.
const batchReplyBytes = 256 // a receipt is about 110 bytes, a per-job error about 230

// MaxNATSBatch is the most jobs a batch sent over NATS may hold for its
// reply to fit within the server's max_payload.
func MaxNATSBatch(maxPayload int64) int {
	return int(max(1, min(int64(jobs.MaxBatchJobs), (maxPayload-64)/batchReplyBytes)))
}

// jobsEndpoint serves PREFIX.jobs.submit and POST /api/v1/jobs: one
// submission (a JSON object) or, when batches are served, a batch (a JSON
// array of them).
type jobsEndpoint struct {
	one     *handler[jobs.Submission, Receipt]
	batch   BatchSubmitter // nil: one job per request
	timeout time.Duration
	log     *slog.Logger
}

// newJobsEndpoint serves sub; batches too when sub is a BatchSubmitter.
func newJobsEndpoint(sub Submitter, timeout time.Duration, log *slog.Logger) *jobsEndpoint {
	e := &jobsEndpoint{one: jobHandler(sub, timeout, log), timeout: timeout, log: log}
	if b, ok := sub.(BatchSubmitter); ok {
		e.batch = b
	}
	return e
}

func (e *jobsEndpoint) limit() int {
	if e.batch != nil {
		return jobs.MaxBatchBytes
	}
	return e.one.limit()
}

func (e *jobsEndpoint) refuseTooLarge(n int) (int, []byte) {
	if e.batch == nil {
		return e.one.refuseTooLarge(n)
	}
	return errorReply(Error{Code: CodeTooLarge, Message: fmt.Sprintf("%s (a job is at most %d bytes, a batch at most %d)", msgTooLarge, jobs.MaxSubmissionBytes, jobs.MaxBatchBytes),
		Problems: tooLarge(n, jobs.MaxBatchBytes, "send a long list in several batches, and large inputs by reference").Problems})
}

func (e *jobsEndpoint) handle(ctx context.Context, data []byte, attrs ...any) (int, []byte) {
	if !jobs.IsBatch(data) {
		return e.one.handle(ctx, data, attrs...)
	}
	if e.batch == nil {
		return errorReply(Error{Code: CodeInvalid, Message: "this intake takes one job per request: send a JSON object, not an array"})
	}
	return e.handleBatch(ctx, data, attrs...)
}

func (e *jobsEndpoint) handleBatch(ctx context.Context, data []byte, attrs ...any) (status int, body []byte) {
	attrs = append(attrs, "kind", "batch")
	defer replyOnPanic(e.log, "handling a batch", &attrs, &status, &body)
	subs, err := jobs.DecodeBatch(data)
	if err != nil {
		return errorReply(capProblems(wireError(err, "job", e.log, attrs...)))
	}
	attrs = append(attrs, "jobs", len(subs))
	// A batch is one pipeline per store round trip, but its validation and
	// encoding grow with it: give it the single timeout per thousand jobs.
	ctx, cancel := context.WithTimeout(ctx, e.timeout*time.Duration(1+len(subs)/1000))
	defer cancel()
	res, err := e.batch.SubmitBatch(ctx, subs)
	if err == nil && len(res) != len(subs) {
		err = errors.New("intake: the BatchSubmitter returned a result count unlike the batch's")
	}
	if err != nil {
		return errorReply(capProblems(wireError(err, "job", e.log, attrs...)))
	}
	for i, r := range res {
		if (r.Receipt == nil || r.JobID == "") && r.Error == nil {
			e.log.Error("intake: the BatchSubmitter returned neither a receipt nor an error", append(attrs, "index", i)...)
			res[i] = BatchResult{Error: &Error{Code: CodeInternal, Message: msgInternal}}
		}
	}
	return http.StatusOK, encodeBatchReceipt(res)
}

// encodeBatchReceipt is encode(BatchReceipt{Results: res}), the results
// encoded on all cores: for a batch of thousands the reply is a good part
// of the time the caller waits.
func encodeBatchReceipt(res []BatchResult) []byte {
	parts := min(runtime.GOMAXPROCS(0), 1+len(res)/512)
	if parts < 2 {
		return encode(BatchReceipt{Results: res})
	}
	bufs := make([][]byte, parts)
	failed := make([]bool, parts)
	per := (len(res) + parts - 1) / parts
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			b := make([]byte, 0, per*128) // a receipt is about 110 bytes
			for _, r := range res[min(p*per, len(res)):min((p+1)*per, len(res))] {
				var err error
				if b, err = r.appendJSON(b); err != nil {
					failed[p] = true
					return
				}
				b = append(b, ',')
			}
			bufs[p] = b
		})
	}
	wg.Wait()
	out := append(make([]byte, 0, 16+len(res)*128), `{"results":[`...)
	for p := range bufs {
		if failed[p] {
			return encode(BatchReceipt{Results: res})
		}
		out = append(out, bufs[p]...)
	}
	if out[len(out)-1] == ',' {
		out = out[:len(out)-1]
	}
	return append(out, "]}"...)
}

// maxBatchProblems bounds the problems one refused batch lists, so that the
// reply fits a NATS message: the first ones say what to fix.
const maxBatchProblems = 200

func capProblems(e Error) Error {
	if len(e.Problems) <= maxBatchProblems {
		return e
	}
	more := len(e.Problems) - maxBatchProblems
	e.Problems = append(e.Problems[:maxBatchProblems:maxBatchProblems],
		&jobs.FieldError{Field: "body", Message: fmt.Sprintf("and %d more problems like these", more)})
	return e
}
