package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// qosCounters count what jobs' cgroups measured, by QoS group, so a
// dashboard can see which group is being held back and which one moves
// the bytes.
type qosCounters struct {
	throttled   metric.Float64Counter
	io          metric.Int64Counter
	memoryKills metric.Int64Counter
}

func (c *qosCounters) create(meter metric.Meter, ns string) error {
	var e [3]error
	c.throttled, e[0] = meter.Float64Counter(ns+".job.cpu_throttled",
		metric.WithUnit("s"),
		metric.WithDescription("CPU time jobs' QoS groups were held back by their CPU quota while the jobs ran, by group."))
	c.io, e[1] = meter.Int64Counter(ns+".job.io",
		metric.WithUnit("By"),
		metric.WithDescription("Storage bytes jobs read and wrote, by QoS group and direction (read, write)."))
	c.memoryKills, e[2] = meter.Int64Counter(ns+".job.memory_kills",
		metric.WithUnit("{job}"),
		metric.WithDescription("Attempts the kernel killed for reaching their memory limit, by QoS group."))
	return errors.Join(e[:]...)
}

// JobQoS records an ended attempt's cgroup counters, as the worker puts
// them in the event (jobs.QoSStats in its JSON form).
func (m *Metrics) JobQoS(q map[string]any) {
	if m == nil {
		return
	}
	group, _ := q["group"].(string)
	g := attribute.String("group", group)
	ctx := context.Background()
	th, _ := q["cpu_throttled_seconds"].(float64)
	gth, _ := q["group_cpu_throttled_seconds"].(float64)
	m.qos.throttled.Add(ctx, max(th, gth), metric.WithAttributes(g))
	r, _ := q["io_read_bytes"].(float64)
	w, _ := q["io_write_bytes"].(float64)
	m.qos.io.Add(ctx, int64(r), metric.WithAttributes(g, attribute.String("direction", "read")))
	m.qos.io.Add(ctx, int64(w), metric.WithAttributes(g, attribute.String("direction", "write")))
	if oom, _ := q["oom_killed"].(bool); oom {
		m.qos.memoryKills.Add(ctx, 1, metric.WithAttributes(g))
	}
}
