package trace

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Limits every reader and the generator enforce. They keep a malformed or
// hostile input from exhausting memory and keep offset arithmetic
// (Submit+Duration+Deadline) far from overflowing time.Duration.
const (
	// MaxJobs is the most jobs a trace may hold: about 1.5 GB of Jobs.
	MaxJobs = 1 << 24
	// MaxSlots is the most slots one job may occupy, all members of a gang
	// together (Slots × Replicas).
	MaxSlots = 1 << 20
	// MaxRequires is the most labels a job may require, as many as a
	// submission may carry (jobs.MaxLabels).
	MaxRequires = jobs.MaxLabels
	// MaxRequireValueBytes bounds one required label's value, as
	// jobs.MaxLabelValueBytes bounds a submission's.
	MaxRequireValueBytes = jobs.MaxLabelValueBytes
	// MaxOffset bounds Submit, Duration and Deadline: 100 years of 365 days.
	MaxOffset = 100 * 365 * 24 * time.Hour
)

// Job is one job of a trace.
type Job struct {
	Submit         time.Duration // offset from the trace start
	Duration       time.Duration // run time when never interrupted (> 0)
	Slots          int           // slots (GPUs, cores) it occupies, >= 1; per member of a gang
	Class          jobs.Class    // jobs.ClassCore or jobs.ClassBurst
	Team           string
	Template       string
	Checkpointable bool
	// Deadline, when > 0, is how long after Submit the job must have finished.
	Deadline time.Duration
	// Replicas, when > 1, makes the job a gang of that many members, each
	// of Slots slots, that start together and run for Duration; 0 and 1
	// are a single job. Slots × Members is at most MaxSlots.
	Replicas int
	// Requires are labels a worker must carry, with these values, to run
	// the job (or any member of it), e.g. {"gpu_model": "A10"}; nil for
	// none. Keys follow the rule of Ballast's label keys (letters, digits,
	// '_', '.', '/', '-', at most 63, starting with a letter or digit);
	// values are 1 to MaxRequireValueBytes bytes of text without control
	// characters or ';'. Readers share one map between the jobs that
	// require the same labels: treat it as read-only.
	Requires map[string]string
	// Share, when > 0, is the thousandths of one GPU the job uses (a pod
	// with gpu_milli 250 shares a GPU with others): 1 to 999, on a job of
	// one slot and one member. Jobs sharing a GPU pack onto it up to one
	// whole GPU's worth, as GPU workers pack gpu_share jobs; 0 is whole
	// slots.
	Share int
	// CPUs and Memory (bytes), when > 0, are what each member needs of
	// its worker beyond its slots, as a template's cpus and memory: they
	// bind only on pools that declare what their workers offer.
	CPUs   float64
	Memory int64
	// Grace, when > 0, is how long the job has to checkpoint and stop once
	// the policy tells it to (a template's grace): under team shares it
	// decides whether the job may borrow another team's share, and the
	// simulator keeps a stopped job's slots for it. 0 for none.
	Grace time.Duration
}

// GPUs is what the job uses with every member running: TotalSlots, or its
// share of one GPU.
func (j Job) GPUs() float64 { return jobs.SlotsUsed(j.TotalSlots(), j.Share) }

// Members is how many members the job runs: Replicas, or 1 for a single job.
func (j Job) Members() int { return max(1, j.Replicas) }

// TotalSlots is the slots the job holds when all its members run:
// Slots × Members.
func (j Job) TotalSlots() int { return j.Slots * j.Members() }

// Trace is jobs sorted by Submit (ties keep input order).
type Trace struct {
	Name  string
	Start time.Time // wall-clock time of offset 0 (for per-day/hour reports); may be zero
	Jobs  []Job
}

// Span is when the last job ends if every job starts at its submission: the
// latest Submit+Duration, which is not always the last job's since a later
// submission may be shorter. It is 0 for an empty trace.
func (t Trace) Span() time.Duration {
	var end time.Duration
	for _, j := range t.Jobs {
		end = max(end, j.Submit+j.Duration)
	}
	return end
}

// Demand returns the number of busy slots over time if every job started at
// its submission and ran uninterrupted for its Duration.
//
// Element i is the sum of TotalSlots (every member of a gang) of the jobs running at the instant i*step,
// jobs that share a GPU counted at their share and the sum rounded up,
// a job running on the half-open interval [Submit, Submit+Duration): a job
// that ends at the instant another starts is not counted twice. The result
// has ceil(Span/step) elements, so the last sample is the last instant
// before Span (at Span nothing runs); it is empty for an empty trace.
//
// These are point samples, not peaks or averages: a job shorter than step
// may fall between two samples and not appear at all. Pick step well below
// the typical job duration when that matters. The cost is
// O(len(Jobs) + Span/step) time and Span/step ints of memory; Demand panics
// when step <= 0, like time.NewTicker, since no sampling is meaningful then.
func (t Trace) Demand(step time.Duration) []int {
	if step <= 0 {
		panic(fmt.Sprintf("trace: Demand step must be > 0, got %v", step))
	}
	n := ceilDiv(t.Span(), step)
	// A difference array makes this linear: +Slots at the first sample a job
	// covers, -Slots at the first sample after it.
	d := make([]int, n+1)
	for _, j := range t.Jobs {
		first, end := ceilDiv(j.Submit, step), ceilDiv(j.Submit+j.Duration, step)
		if first < end {
			d[first] += j.milli()
			d[end] -= j.milli()
		}
	}
	// Counted in thousandths so shares add up, then rounded up to whole
	// slots, as BusyTime does.
	for i := 1; i < len(d); i++ {
		d[i] += d[i-1]
	}
	for i := range d {
		d[i] = jobs.WholeGPUs(int64(d[i]))
	}
	return d[:n]
}

// ceilDiv is ceil(a/b) for a >= 0 and b > 0.
func ceilDiv(a, b time.Duration) int {
	return int((a + b - 1) / b)
}

// Validate reports every job that breaks the Job contract and whether the
// jobs are sorted by Submit. Readers and Generate only return valid traces;
// this is for traces built by hand.
func (t Trace) Validate() error {
	var errs []error
	for i, j := range t.Jobs {
		if err := j.validate(); err != nil {
			errs = append(errs, fmt.Errorf("job %d: %w", i, err))
		}
		if i > 0 && j.Submit < t.Jobs[i-1].Submit {
			errs = append(errs, fmt.Errorf("job %d: submitted before job %d: jobs must be sorted by Submit (see SortJobs)", i, i-1))
		}
		if len(errs) >= 20 {
			// A systematically broken trace would otherwise make an error of
			// millions of lines.
			errs = append(errs, errors.New("more problems not shown"))
			break
		}
	}
	return errors.Join(errs...)
}

// validate checks one job; the field names match Job's.
func (j Job) validate() error {
	var errs []error
	if j.Submit < 0 || j.Submit > MaxOffset {
		errs = append(errs, fmt.Errorf("submit: %v is outside [0, %v]", j.Submit, MaxOffset))
	}
	if j.Duration <= 0 || j.Duration > MaxOffset {
		errs = append(errs, fmt.Errorf("duration: %v is outside (0, %v]", j.Duration, MaxOffset))
	}
	if j.Slots < 1 || j.Slots > MaxSlots {
		errs = append(errs, fmt.Errorf("slots: %d is outside [1, %d]", j.Slots, MaxSlots))
	}
	if j.Class != jobs.ClassCore && j.Class != jobs.ClassBurst {
		errs = append(errs, fmt.Errorf("class: %q is neither %q nor %q", j.Class, jobs.ClassCore, jobs.ClassBurst))
	}
	if j.Deadline < 0 || j.Deadline > MaxOffset {
		errs = append(errs, fmt.Errorf("deadline: %v is outside [0, %v]", j.Deadline, MaxOffset))
	}
	if j.Replicas < 0 || j.Replicas > MaxSlots {
		errs = append(errs, fmt.Errorf("replicas: %d is outside [0, %d]", j.Replicas, MaxSlots))
	} else if j.Slots >= 1 && j.Slots <= MaxSlots && j.Slots > MaxSlots/j.Members() {
		errs = append(errs, fmt.Errorf("replicas: %d members of %d slots are more than %d slots", j.Replicas, j.Slots, MaxSlots))
	}
	if err := checkRequires(j.Requires); err != nil {
		errs = append(errs, fmt.Errorf("requires: %w", err))
	}
	if !(j.CPUs >= 0) || j.CPUs > 1<<20 || j.Memory < 0 {
		errs = append(errs, fmt.Errorf("cpus: %v and memory: %d bytes; give amounts >= 0", j.CPUs, j.Memory))
	}
	if j.Grace < 0 || j.Grace > MaxOffset {
		errs = append(errs, fmt.Errorf("grace: %v is outside [0, %v]", j.Grace, MaxOffset))
	}
	if j.Share < 0 || j.Share >= 1000 || (j.Share > 0 && (j.Slots != 1 || j.Members() != 1)) {
		errs = append(errs, fmt.Errorf("share: %d thousandths of a GPU; give 1 to 999 on a job of one slot and one member, or 0", j.Share))
	}
	return errors.Join(errs...)
}

// checkRequires holds a job's required labels to the rules of Job.Requires.
func checkRequires(req map[string]string) error {
	if len(req) > MaxRequires {
		return fmt.Errorf("%d labels; the limit is %d", len(req), MaxRequires)
	}
	for _, k := range slices.Sorted(maps.Keys(req)) {
		if msg := checkRequireKey(k); msg != "" {
			return fmt.Errorf("key %q %s", k, msg)
		}
		if msg := checkRequireValue(req[k]); msg != "" {
			return fmt.Errorf("%s: value %q %s", k, req[k], msg)
		}
	}
	return nil
}

// checkRequireKey says what is wrong with a label key, "" when nothing:
// the rule of a submission's label keys in package jobs.
func checkRequireKey(k string) string {
	if len(k) == 0 || len(k) > 63 {
		return "is not 1 to 63 characters"
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigit(c)
		if !alnum && (i == 0 || (c != '_' && c != '.' && c != '/' && c != '-')) {
			return "uses other than letters, digits, '_', '.', '/' or '-' (and starts with a letter or digit)"
		}
	}
	return ""
}

// checkRequireValue says what is wrong with a label value, "" when nothing.
// ';' separates labels in the CSV format, so no value holds one.
func checkRequireValue(v string) string {
	switch {
	case v == "":
		return "is empty"
	case len(v) > MaxRequireValueBytes:
		return fmt.Sprintf("is %d bytes; the limit is %d", len(v), MaxRequireValueBytes)
	case strings.ContainsRune(v, ';'):
		return "holds a ';', which separates labels"
	}
	return jobs.CheckText(v, jobs.NoControls)
}

// SortJobs sorts jobs by Submit; jobs submitted at the same time keep their
// order, which is the tie rule of Trace. It does nothing to sorted input.
func SortJobs(jobs []Job) {
	if slices.IsSortedFunc(jobs, bySubmit) {
		return
	}
	slices.SortStableFunc(jobs, bySubmit)
}

func bySubmit(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) }
