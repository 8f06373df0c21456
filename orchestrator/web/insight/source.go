package insight

import (
	"context"
	"errors"
	"time"

	"github.com/ballastdev/ballast/orchestrator/control/telemetry"
	"github.com/ballastdev/ballast/orchestrator/model/cost"
	"github.com/ballastdev/ballast/orchestrator/model/policy"
	"github.com/ballastdev/ballast/orchestrator/model/shares"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/leader"
	"github.com/ballastdev/ballast/queues/redisinfo"
	"github.com/ballastdev/ballast/queues/registry"
)

// Defaults of a Source's spans.
const (
	// DefaultRecent is the span of the key measures' current figures.
	DefaultRecent = time.Hour
	// DefaultSeriesWindow and DefaultSeriesStep shape the key measures'
	// series: six hours in 10-minute buckets.
	DefaultSeriesWindow = 6 * time.Hour
	DefaultSeriesStep   = 10 * time.Minute
	// DefaultAdviceWindow is how far back the overview's advice looks.
	DefaultAdviceWindow = 24 * time.Hour
	// Retention is how long usage records and ended worker lives are
	// kept unless the config says otherwise (controller.cost_retention):
	// a month of cost reports, a day to spare. The config's default is
	// this value.
	Retention = 32 * 24 * time.Hour
)

// Span is how far back the key measures' series goes, and its buckets.
type Span struct {
	Name         string
	Window, Step time.Duration
}

// Spans are the series spans the API and the dashboard offer: 60 one-minute
// buckets, 36 of ten minutes (the default), or 48 of half an hour.
var Spans = []Span{
	{Name: "1h", Window: time.Hour, Step: time.Minute},
	{Name: "6h", Window: DefaultSeriesWindow, Step: DefaultSeriesStep},
	{Name: "24h", Window: 24 * time.Hour, Step: 30 * time.Minute},
}

// SpanNamed returns the span of that name; ok is false for an unknown one.
func SpanNamed(name string) (Span, bool) {
	for _, sp := range Spans {
		if sp.Name == name {
			return sp, true
		}
	}
	return Span{}, false
}

// span is the Source's series span, named when it is one of Spans.
func (s Source) span() Span {
	sp := Span{Window: s.seriesWindow(), Step: s.seriesStep()}
	for _, known := range Spans {
		if known.Window == sp.Window && known.Step == sp.Step {
			return known
		}
	}
	sp.Name = sp.Window.String()
	return sp
}

// Source reads the live store with the settings that price and judge it.
type Source struct {
	Store Store
	// Accounting is the usage ledger and the sampled series on the same
	// Redis as Store (usage.New of it).
	Accounting Accounting
	// Registry is the worker registry; nil means the registry of Store's
	// namespace, when Store is a kernel (the Redis store is).
	Registry telemetry.WorkerLister
	// Lease is the leader lease; nil means the lease of Store's
	// namespace, when Store is a kernel.
	Lease LeaseHolder
	// Redis reads the topology; nil means redisinfo of Store, when Store
	// is a kernel.
	Redis TopologyReader
	// Pools are the configured pools with their prices and billing.
	Pools []policy.Pool
	// Quota is each fixed pool's prepaid slots.
	Quota map[string]int
	// High and Low are the watermarks the controller runs with.
	High, Low float64
	// CoreOverflow and CoreMaxWait are rule 7 as the controller runs it.
	CoreOverflow bool
	CoreMaxWait  time.Duration
	// Location sets the cost days; nil means UTC.
	Location *time.Location
	// Shares and Chargeback settle the quota between teams (Settle);
	// Shares also gives the overview its share bars (off when empty).
	Shares     shares.Config
	Chargeback cost.Chargeback
	// Recent, SeriesWindow, SeriesStep, AdviceWindow and Retention
	// override the defaults above when positive.
	Recent, SeriesWindow, SeriesStep, AdviceWindow, Retention time.Duration
	// Engines is what the overview says of NATS and the provider.
	Engines Engines
}

// workers is Registry, or the registry of Store's namespace. A Store
// that is no kernel, with no Registry, has no workers to read: a
// mistake of wiring, said at every read.
func (s Source) workers() telemetry.WorkerLister {
	if s.Registry != nil {
		return s.Registry
	}
	if k, ok := s.Store.(queues.Kernel); ok {
		return registry.New(k)
	}
	return noRegistry{}
}

// lease is Lease, or the lease of Store's namespace; as workers, a Store
// that is no kernel with no Lease says so at every read.
func (s Source) lease() LeaseHolder {
	if s.Lease != nil {
		return s.Lease
	}
	if k, ok := s.Store.(queues.Kernel); ok {
		return leader.New(k)
	}
	return noLease{}
}

// redis is Redis, or the reader of Store's Redis. A Store that is no
// kernel with no Redis shows the missing wiring as the topology's error,
// as a read that failed would.
func (s Source) redis() TopologyReader {
	if s.Redis != nil {
		return s.Redis
	}
	if k, ok := s.Store.(queues.Kernel); ok {
		return redisinfo.New(k)
	}
	return noRedis{}
}

type noRedis struct{}

func (noRedis) Topology(context.Context) redisinfo.Topology {
	return redisinfo.Topology{Error: "insight.Source: no Redis reader (set Source.Redis)"}
}

type noLease struct{}

func (noLease) Holder(context.Context) (string, error) {
	return "", errors.New("insight.Source: no leader lease (set Source.Lease)")
}

type noRegistry struct{}

func (noRegistry) Workers(context.Context) ([]queues.WorkerInfo, error) {
	return nil, errors.New("insight.Source: no worker registry (set Source.Registry)")
}

func (s Source) pool(name string) (policy.Pool, bool) {
	for _, p := range s.Pools {
		if p.Name == name {
			return p, true
		}
	}
	return policy.Pool{}, false
}

func (s Source) loc() *time.Location {
	if s.Location == nil {
		return time.UTC
	}
	return s.Location
}

// KeptFor is how long usage records are kept: the oldest window that can
// be priced.
func (s Source) KeptFor() time.Duration { return orDefault(s.Retention, Retention) }

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
