package insight

import (
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/advisor"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/redisinfo"
)

// Overview is the whole picture at one instant: capacity, queues, running
// work, the three key measures over time, cost so far today and the advice.
// It is the body of GET /api/v1/overview and of each event of its stream.
type Overview struct {
	At     time.Time `json:"at"`
	Leader string    `json:"leader"`
	// Redis is the Redis topology in use: after a failover its masters
	// are the promoted replicas.
	Redis redisinfo.Topology `json:"redis_topology"`
	// Engines names the NATS servers and the elastic capacity provider.
	Engines Engines      `json:"engines"`
	Pools   []PoolView   `json:"pools"`
	Workers []WorkerView `json:"workers"`
	Queues  []QueueView  `json:"queues"`
	Running []RunningJob `json:"running"`
	// Overflowed counts core jobs sent to on-demand capacity by rule 7 that
	// are still queued or running there: work paid at the on-demand
	// premium because the quota was full for too long.
	Overflowed int `json:"overflowed"`
	// Key holds the three measures that say whether the split between
	// fixed and elastic capacity is right, now and over time.
	Key KeyMetrics `json:"key"`
	// Span names how far back Key.Series goes (see Spans).
	Span string `json:"span"`
	// Cost is today's spend so far (from midnight in the cost time zone).
	Cost CostView `json:"cost"`
	// Recommendations is the advice over the advice window (24 h).
	Recommendations []advisor.Recommendation `json:"recommendations"`
	// Problems lists parts that could not be computed, with the reason;
	// the rest of the overview is still right.
	Problems []string `json:"problems,omitempty"`
	// DataLoss is the recorded loss of Redis data not yet recovered or
	// acknowledged (nil: none); the console shows it as a banner.
	DataLoss *queues.DataLoss `json:"data_loss,omitempty"`
	// Shares is each team's use of its share of the fixed quota now (nil
	// with shares off): the console's share bars.
	Shares *shares.View `json:"shares,omitempty"`
}

// PoolView is one pool's capacity and what it costs per hour now.
type PoolView struct {
	Name string `json:"name"`
	// Kind is fixed, ondemand or spot.
	Kind string `json:"kind"`
	// PricePerSlotHour is the configured price.
	PricePerSlotHour float64 `json:"price_per_slot_hour"`
	// Quota is the prepaid slots of a fixed pool; zero for elastic ones.
	Quota int `json:"quota"`
	// Busy and Idle count the slots of the pool's registered workers.
	Busy int `json:"busy"`
	Idle int `json:"idle"`
	// Workers counts registered workers; Draining those draining.
	Workers  int `json:"workers"`
	Draining int `json:"draining"`
	// CostPerHour is what the pool costs per hour right now: the quota for
	// a fixed pool, the running workers for an elastic one.
	CostPerHour float64 `json:"cost_per_hour"`
}

// WorkerView is one registered worker.
type WorkerView struct {
	ID    string `json:"id"`
	Pool  string `json:"pool"`
	Kind  string `json:"kind"`
	Slots int    `json:"slots"`
	Busy  int    `json:"busy"`
	// State is up or draining.
	State string `json:"state"`
	// Started is the worker process's start; AgeSeconds is At minus it.
	Started    time.Time `json:"started"`
	AgeSeconds float64   `json:"age_seconds"`
	// BilledCost is what an elastic worker has been billed so far: its
	// life from its launch (or its start, when no launch was recorded)
	// rounded up to the pool's billing unit and minimum. A fixed worker is
	// paid through the quota and shows zero.
	BilledCost float64 `json:"billed_cost"`
	// Isolation is the worker's QoS isolation: its cgroup version and
	// each configured limit, in force or not and why (nil: the worker
	// reports none).
	Isolation *queues.Isolation `json:"isolation,omitempty"`
	// Labels are the worker's labels (gpu_model on a GPU worker).
	Labels map[string]string `json:"labels,omitempty"`
	// GPUs are a GPU worker's devices, each with the job holding it.
	GPUs []queues.GPUInfo `json:"gpus,omitempty"`
}

// QueueView is one queue's backlog.
type QueueView struct {
	Name          string  `json:"name"`
	Pending       int     `json:"pending"`
	Running       int     `json:"running"`
	OldestSeconds float64 `json:"oldest_seconds"`
}

// RunningJob is one running attempt and what it has cost so far.
type RunningJob struct {
	ID       string `json:"id"`
	Template string `json:"template"`
	Team     string `json:"team"`
	Class    string `json:"class"`
	Queue    string `json:"queue"`
	Pool     string `json:"pool"`
	Worker   string `json:"worker"`
	// Attempt is the delivery (the fencing counter); Runs counts the
	// attempts that started, this one included.
	Attempt int       `json:"attempt"`
	Runs    int       `json:"runs"`
	Started time.Time `json:"started"`
	// WaitSeconds is how long this attempt waited to start.
	WaitSeconds float64 `json:"wait_seconds"`
	// RunSeconds is At minus Started.
	RunSeconds float64 `json:"run_seconds"`
	// Overflowed marks core work running on on-demand capacity because it
	// waited too long for the quota (rule 7).
	Overflowed bool `json:"overflowed,omitempty"`
	// Cost is RunSeconds at its pool's price per slot-hour (the quota's
	// price on a fixed pool): what the ledger will charge it so far.
	Cost float64 `json:"cost"`
}

// KeyMetrics are the three measures of the hybrid split.
type KeyMetrics struct {
	// ElasticWaitP95Seconds is the nearest-rank p95 of how long the
	// attempts that started on elastic capacity in the last Recent waited;
	// ElasticStarts counts them. Zero with none.
	ElasticWaitP95Seconds float64 `json:"elastic_wait_p95_seconds"`
	ElasticStarts         int     `json:"elastic_starts"`
	// FixedIdleNow is the quota's idle share now; FixedIdleMean its mean
	// over the samples of the last Recent. Nil without fixed capacity.
	FixedIdleNow  *float64 `json:"fixed_idle_now"`
	FixedIdleMean *float64 `json:"fixed_idle_mean"`
	// Preemptions counts attempts stopped by a preemption, a drain or a
	// lost worker in the last Recent, by outcome (preempted, requeued,
	// lost).
	Preemptions       int            `json:"preemptions"`
	PreemptionsByKind map[string]int `json:"preemptions_by_kind"`
	// RecentSeconds is the span of the figures above.
	RecentSeconds float64 `json:"recent_seconds"`
	// Series has the same three measures in buckets over the series
	// window, oldest first.
	Series []KeyBucket `json:"series"`
}

// KeyBucket is the key measures over one bucket of time.
type KeyBucket struct {
	From time.Time `json:"from"`
	// ElasticWaitP95Seconds and ElasticStarts as in KeyMetrics.
	ElasticWaitP95Seconds float64 `json:"elastic_wait_p95_seconds"`
	ElasticStarts         int     `json:"elastic_starts"`
	// FixedIdle is the mean idle share of the samples in the bucket; nil
	// with none.
	FixedIdle   *float64 `json:"fixed_idle"`
	Preemptions int      `json:"preemptions"`
	// NoData marks a bucket that ended before Ballast started in this
	// namespace: its zeros are not measurements, and a chart draws a gap.
	NoData bool `json:"no_data,omitempty"`
}

// CostView is what was spent over a window, by pool and team.
type CostView struct {
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
	// Total is what was paid; Fixed and Elastic split it.
	Total   float64 `json:"total"`
	Fixed   float64 `json:"fixed"`
	Elastic float64 `json:"elastic"`
	// Idle is the part of Total no job used.
	Idle float64 `json:"idle"`
	// LostWork is what the work thrown away by preemptions cost.
	LostWork float64 `json:"lost_work"`
	// Premium is what elastic slot-hours cost over fixed prices.
	Premium float64     `json:"premium"`
	Pools   []PoolCost  `json:"pools"`
	Teams   []NamedCost `json:"teams"`
}

// PoolCost is one pool's spend in a CostView.
type PoolCost struct {
	Pool string `json:"pool"`
	Kind string `json:"kind"`
	// Paid is what the pool was paid; Used the part charged to jobs.
	Paid float64 `json:"paid"`
	Used float64 `json:"used"`
	Idle float64 `json:"idle"`
	// IdleShare is the paid slot-hours no job used, in [0, 1].
	IdleShare float64 `json:"idle_share"`
}

// NamedCost is what the jobs of one team were charged.
type NamedCost struct {
	Name      string  `json:"name"`
	Cost      float64 `json:"cost"`
	SlotHours float64 `json:"slot_hours"`
	LostCost  float64 `json:"lost_cost"`
	Premium   float64 `json:"premium"`
}
