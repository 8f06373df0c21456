package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/orchestrator/model/sweep"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/flows"
)

// Labels set on the jobs of sweep trials.
const (
	LabelSweep = "ballast.sweep"
	LabelTrial = "ballast.trial"
)

// fanOutChunk is how many trials are enqueued between two progress records:
// a fan-out that dies redoes at most this many submissions (idempotently).
const fanOutChunk = 500

// SweepsOptions configures the sweep runner.
type SweepsOptions struct {
	// Sweeps keeps the sweeps; Jobs reaches their trials' jobs.
	Sweeps    SweepBook
	Jobs      TrialJobs
	Submitter SpecSubmitter
	Catalog   *jobs.Catalog
	Events    events.Publisher
	Logger    *slog.Logger
	// FanOut bounds the submissions in flight while enqueueing trials
	// (default 16): enough to hide Redis round trips, few enough not to
	// starve the intake's other callers.
	FanOut int
}

// Sweeps accepts sweeps and runs them: it enqueues trials under the sweep's
// max-parallel limit, stops trials by the median rule, and ends or cancels
// sweeps. SubmitSweep may run on any controller; Tick runs on the leader.
type Sweeps struct {
	opts SweepsOptions
	log  *slog.Logger

	// ended caches, per active sweep, the briefs of trial jobs that have
	// ended: an ended job never changes, so a tick reads only the live
	// ones instead of every trial of a 10,000-trial sweep.
	mu    sync.Mutex
	ended map[string]map[string]queues.JobBrief
}

// NewSweeps returns a sweep runner.
func NewSweeps(o SweepsOptions) (*Sweeps, error) {
	if o.Sweeps == nil || o.Jobs == nil || o.Submitter == nil || o.Catalog == nil {
		return nil, errors.New("controller.NewSweeps: Sweeps, Jobs, Submitter and Catalog are required")
	}
	if o.FanOut <= 0 {
		o.FanOut = 16
	}
	if o.Events == nil {
		o.Events = events.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Sweeps{opts: o, log: o.Logger, ended: map[string]map[string]queues.JobBrief{}}, nil
}

// SubmitSweep validates spec against the catalog, records the sweep with
// every trial's resolved spec, and enqueues the first trials (all of them
// without a max-parallel limit) before answering. If enqueueing stops
// midway (Redis trouble), the sweep is recorded and the leader enqueues the
// rest: the receipt says how many were queued.
func (s *Sweeps) SubmitSweep(ctx context.Context, spec sweep.Spec) (intake.SweepReceipt, error) {
	spec = spec.WithDefaults()
	trials, err := sweep.Expand(spec, s.opts.Catalog)
	if err != nil {
		return intake.SweepReceipt{}, err
	}
	specs := make([]jobs.Spec, len(trials))
	for i, t := range trials {
		specs[i] = t.Spec
	}
	body, _ := json.Marshal(spec) // re-encoded so key order and spacing do not matter
	sum := sha256.Sum256(body)
	rec, dup, err := s.opts.Sweeps.CreateSweep(ctx, flows.NewSweep{Spec: spec, Trials: specs, Fingerprint: hex.EncodeToString(sum[:16])})
	if err != nil {
		return intake.SweepReceipt{}, err
	}
	if !dup {
		s.log.Info("sweep accepted", "sweep", rec.ID, "template", spec.Template, "trials", rec.Total, "max_parallel", spec.MaxParallel)
		s.publish(events.Event{ID: rec.ID + ".created", Type: events.TypeSweepCreated, SweepID: rec.ID, Time: rec.CreatedAt,
			Data: events.SweepCreated{Template: spec.Template, Trials: rec.Total, MaxParallel: spec.MaxParallel}.Data()})
	}
	queued, err := s.fill(ctx, rec, s.inflight(ctx, rec))
	if err != nil {
		s.log.Warn("sweep recorded but not fully enqueued; the leader enqueues the rest", "sweep", rec.ID, "queued", queued, "err", err)
	}
	return intake.SweepReceipt{SweepID: rec.ID, Trials: rec.Total, Queued: queued, Duplicate: dup}, nil
}

// inflight counts rec's trials whose job has not ended; on a read error it
// assumes all recorded trials are in flight, which only delays enqueueing.
func (s *Sweeps) inflight(ctx context.Context, rec flows.SweepRecord) int {
	briefs, err := s.opts.Jobs.JobBriefs(ctx, trialJobs(rec))
	if err != nil {
		return len(rec.Trials)
	}
	return countLive(briefs)
}

// fill enqueues rec's next trials as the max-parallel limit allows, given
// inflight live trials, and returns how many trials are enqueued in all.
func (s *Sweeps) fill(ctx context.Context, rec flows.SweepRecord, inflight int) (int, error) {
	n := sweep.Room(rec.Spec.MaxParallel, inflight, rec.Total-rec.Cursor)
	if rec.State != flows.SweepRunning || n == 0 {
		return rec.Cursor, nil
	}
	for from := rec.Cursor; from < rec.Cursor+n; from += fanOutChunk {
		to := min(from+fanOutChunk, rec.Cursor+n)
		specs, err := s.opts.Sweeps.TrialSpecs(ctx, rec.ID, from, to)
		if err != nil {
			return from, err
		}
		if len(specs) != to-from {
			return from, fmt.Errorf("sweep %s: %d trial specs stored for trials %d..%d", rec.ID, len(specs), from, to-1)
		}
		got, done, subErr := s.submitTrials(ctx, rec.ID, from, specs)
		state, err := s.opts.Sweeps.RecordTrials(ctx, rec.ID, got, from+done)
		if err != nil {
			return from, err
		}
		if state == flows.SweepCancelled {
			// Cancelled while these were being enqueued: take them back.
			for _, job := range got {
				_, _ = s.opts.Jobs.Cancel(ctx, job)
			}
			return from + done, nil
		}
		if subErr != nil {
			return from + done, subErr
		}
	}
	return rec.Cursor + n, nil
}

// submitTrials enqueues trials from, from+1, ... concurrently. It returns
// the jobs of those it enqueued and done, the length of the prefix of
// trials all enqueued: the cursor may only move past those.
func (s *Sweeps) submitTrials(ctx context.Context, sweepID string, from int, specs []jobs.Spec) (map[int]string, int, error) {
	ids := make([]string, len(specs))
	errs := make([]error, len(specs))
	sem := make(chan struct{}, s.opts.FanOut)
	var wg sync.WaitGroup
	for k := range specs {
		i := from + k
		spec := specs[k]
		labels := make(map[string]string, len(spec.Labels)+2)
		for lk, lv := range spec.Labels {
			labels[lk] = lv
		}
		labels[LabelSweep], labels[LabelTrial] = sweepID, strconv.Itoa(i)
		spec.Labels = labels
		spec.IdempotencyKey = flows.TrialIdempotencyKey(sweepID, i)
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			j, _, err := s.opts.Submitter.SubmitSpec(ctx, spec)
			ids[k], errs[k] = j.ID, err
		}()
	}
	wg.Wait()
	got := make(map[int]string, len(specs))
	done := len(specs)
	var first error
	for k := range specs {
		if errs[k] != nil {
			if first == nil {
				first, done = fmt.Errorf("trial %d: %w", from+k, errs[k]), k
			}
			continue
		}
		got[from+k] = ids[k]
	}
	return got, done, first
}

// Tick advances every active sweep at now.
func (s *Sweeps) Tick(ctx context.Context, now time.Time) error {
	ids, err := s.opts.Sweeps.ActiveSweeps(ctx)
	if err != nil {
		return err
	}
	s.keepOnly(ids)
	var errs []error
	for _, id := range ids {
		if err := s.advance(ctx, id, now); err != nil {
			errs = append(errs, fmt.Errorf("sweep %s: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

func (s *Sweeps) advance(ctx context.Context, id string, now time.Time) error {
	rec, err := s.opts.Sweeps.GetSweep(ctx, id)
	if err != nil {
		return err
	}
	briefs, err := s.briefs(ctx, rec)
	if err != nil {
		return err
	}
	if rec.State == flows.SweepCancelled {
		return s.finishCancel(ctx, rec, briefs, now)
	}
	if rec.Spec.EarlyStop != nil {
		if err := s.earlyStop(ctx, rec, briefs, now); err != nil {
			return err
		}
	}
	live := countLive(briefs)
	if rec.Cursor < rec.Total {
		_, err := s.fill(ctx, rec, live)
		return err
	}
	if live > 0 {
		return nil
	}
	ended, err := s.opts.Sweeps.FinishSweep(ctx, rec.ID, flows.SweepCompleted)
	if err != nil || !ended {
		return err
	}
	s.forget(rec.ID)
	view := buildSweepView(rec, briefs)
	done := events.SweepCompleted{Trials: rec.Total, Counts: make(map[string]int, len(view.Summary.Counts))}
	for state, n := range view.Summary.Counts {
		done.Counts[string(state)] = n
	}
	if b := view.Summary.Best; b != nil {
		done.HasBest, done.BestTrial, done.BestMetric = true, b.Index, b.Metric
	}
	s.log.Info("sweep completed", "sweep", rec.ID, "trials", rec.Total, "best", view.Summary.Best)
	s.publish(events.Event{ID: rec.ID + ".completed", Type: events.TypeSweepCompleted, SweepID: rec.ID, Time: now, Data: done.Data()})
	return nil
}

// briefs returns the briefs of rec's trial jobs, reading from Redis only
// those not known to have ended.
func (s *Sweeps) briefs(ctx context.Context, rec flows.SweepRecord) (map[string]queues.JobBrief, error) {
	s.mu.Lock()
	known := s.ended[rec.ID]
	if known == nil {
		known = map[string]queues.JobBrief{}
		s.ended[rec.ID] = known
	}
	var ids []string
	for _, job := range rec.Trials {
		if _, ok := known[job]; !ok {
			ids = append(ids, job)
		}
	}
	s.mu.Unlock()
	fresh, err := s.opts.Jobs.JobBriefs(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]queues.JobBrief, len(rec.Trials))
	s.mu.Lock()
	defer s.mu.Unlock()
	for job, b := range known {
		out[job] = b
	}
	for job, b := range fresh {
		out[job] = b
		if b.State.Terminal() {
			known[job] = b
		}
	}
	return out, nil
}

// keepOnly drops the caches of sweeps no longer active, which another
// leader may have finished while this controller stood by.
func (s *Sweeps) keepOnly(active []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := make(map[string]bool, len(active))
	for _, id := range active {
		keep[id] = true
	}
	for id := range s.ended {
		if !keep[id] {
			delete(s.ended, id)
		}
	}
}

// forget drops a finished sweep's cache.
func (s *Sweeps) forget(id string) {
	s.mu.Lock()
	delete(s.ended, id)
	s.mu.Unlock()
}

// earlyStop applies the median rule to the running trials.
func (s *Sweeps) earlyStop(ctx context.Context, rec flows.SweepRecord, briefs map[string]queues.JobBrief, now time.Time) error {
	metrics, err := s.opts.Jobs.Metrics(ctx, trialJobs(rec))
	if err != nil {
		return err
	}
	byTrial := make(map[int][]float64, len(metrics))
	for i, job := range rec.Trials {
		if m := metrics[job]; len(m) > 0 {
			byTrial[i] = m
		}
	}
	for i, job := range rec.Trials {
		if rec.Stopped[i] || briefs[job].State != jobs.StateRunning {
			continue
		}
		step := len(byTrial[i]) - 1
		if !sweep.ShouldStop(*rec.Spec.EarlyStop, byTrial, i, step, rec.Spec.Goal) {
			continue
		}
		if err := s.opts.Sweeps.StopTrial(ctx, rec.ID, i); err != nil {
			return err
		}
		if _, err := s.opts.Jobs.Cancel(ctx, job); err != nil && !errors.Is(err, jobs.ErrNotFound) {
			return err
		}
		s.log.Info("sweep trial stopped by the median rule", "sweep", rec.ID, "trial", i, "job", job, "step", step)
		s.publish(events.Event{ID: rec.ID + ".stopped." + strconv.Itoa(i), Type: events.TypeSweepTrialStopped, SweepID: rec.ID,
			JobID: job, Time: now, Reason: "worse than the median of the other trials at the same step",
			Data: events.TrialStopped{Trial: i, Step: step, Metric: byTrial[i][step]}.Data()})
	}
	return nil
}

// finishCancel makes sure no trial of a cancelled sweep stays queued or
// running, including one a fan-out enqueued and died before recording,
// then ends the sweep.
func (s *Sweeps) finishCancel(ctx context.Context, rec flows.SweepRecord, briefs map[string]queues.JobBrief, now time.Time) error {
	var unrecorded []int
	for i := rec.Cursor; i < min(rec.Total, rec.Cursor+fanOutChunk); i++ {
		if _, ok := rec.Trials[i]; !ok {
			unrecorded = append(unrecorded, i)
		}
	}
	orphans, err := s.unrecordedJobs(ctx, rec.ID, unrecorded)
	if err != nil {
		return err
	}
	if len(orphans) > 0 {
		if _, err := s.opts.Sweeps.RecordTrials(ctx, rec.ID, orphans, 0); err != nil {
			return err
		}
		ob, err := s.opts.Jobs.JobBriefs(ctx, mapValues(orphans))
		if err != nil {
			return err
		}
		for job, b := range ob {
			briefs[job] = b
		}
	}
	live := 0
	for job, b := range briefs {
		if b.State.Terminal() {
			continue
		}
		live++
		if _, err := s.opts.Jobs.Cancel(ctx, job); err != nil && !errors.Is(err, jobs.ErrNotFound) {
			return err
		}
	}
	if live > 0 {
		return nil // running trials stop within a heartbeat; look again next tick
	}
	ended, err := s.opts.Sweeps.FinishSweep(ctx, rec.ID, flows.SweepCancelled)
	if ended {
		s.forget(rec.ID)
	}
	if err == nil && ended {
		s.log.Info("sweep cancelled; no trial is queued or running", "sweep", rec.ID)
		s.publish(events.Event{ID: rec.ID + ".cancelled", Type: events.TypeSweepCancelled, SweepID: rec.ID, Time: now})
	}
	return err
}

// CancelSweep cancels a sweep: nothing more is enqueued, queued trials are
// cancelled now and running ones are told to stop. The leader keeps
// cancelling until none is left, then ends the sweep. It reports whether
// this call cancelled it (false: it had already ended or been cancelled).
func CancelSweep(ctx context.Context, sweeps SweepCanceller, store FlowJobs, id string) (bool, error) {
	cancelled, err := sweeps.CancelSweep(ctx, id)
	if err != nil {
		return false, err
	}
	rec, err := sweeps.GetSweep(ctx, id)
	if err != nil {
		return cancelled, err
	}
	briefs, err := store.JobBriefs(ctx, trialJobs(rec))
	if err != nil {
		return cancelled, err
	}
	var errs []error
	for job, b := range briefs {
		if !b.State.Terminal() {
			if _, err := store.Cancel(ctx, job); err != nil && !errors.Is(err, jobs.ErrNotFound) {
				errs = append(errs, err)
			}
		}
	}
	return cancelled, errors.Join(errs...)
}

// unrecordedJobs returns the jobs of the trials indexes of sweepID that a
// fan-out submitted and died before recording: their idempotency keys,
// derived from the sweep, name them in the job store.
func (s *Sweeps) unrecordedJobs(ctx context.Context, sweepID string, indexes []int) (map[int]string, error) {
	keys := make([]string, len(indexes))
	for k, i := range indexes {
		keys[k] = flows.TrialIdempotencyKey(sweepID, i)
	}
	byKey, err := s.opts.Jobs.JobsByKey(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[int]string, len(byKey))
	for k, i := range indexes {
		if job, ok := byKey[keys[k]]; ok {
			out[i] = job
		}
	}
	return out, nil
}

func (s *Sweeps) publish(e events.Event) { publish(s.opts.Events, s.log, e) }

func trialJobs(rec flows.SweepRecord) []string { return mapValues(rec.Trials) }

func mapValues(m map[int]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// countLive counts jobs that have not ended.
func countLive(briefs map[string]queues.JobBrief) int {
	n := 0
	for _, b := range briefs {
		if !b.State.Terminal() {
			n++
		}
	}
	return n
}
