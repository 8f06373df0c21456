package cli

import (
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

func TestIsolationOutputSaysWhatIsAndIsNotInForce(t *testing.T) {
	iso := &queues.Isolation{Requested: "auto", Mode: "v1", Reason: "v1 because cgroup v2 has no controllers",
		Limits: []queues.LimitState{
			{Group: "burst", Limit: "cpu", Value: "2 cores", InForce: true},
			{Group: "burst", Limit: "egress", Value: "50 MiB/s", Reason: "the kernel has no cgroup tc classifier"},
		}}
	if got := isolationSummary(iso); got != "v1 1/2 limits" {
		t.Errorf("summary %q", got)
	}
	if got := isolationSummary(nil); got != "-" {
		t.Errorf("summary of a worker reporting none: %q", got)
	}
	var b strings.Builder
	writeIsolation(&b, iso)
	out := b.String()
	for _, want := range []string{
		"isolation: v1 (requested auto): v1 because cgroup v2 has no controllers",
		"burst", "cpu", "2 cores", "in force",
		"egress", "50 MiB/s", "NOT in force: the kernel has no cgroup tc classifier",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestJobShowsItsCgroupCounters(t *testing.T) {
	j := jobs.Job{Spec: jobs.Spec{QoS: "tiny", Limits: &jobs.Limits{Memory: 32 << 20}},
		QoS: &jobs.QoSStats{Group: "tiny", Isolation: "v1", CPUSeconds: 1.5, GroupThrottledSeconds: 0.75, GroupThrottledPeriods: 9,
			ReadBytes: 3 << 20, IOSource: "process", PeakMemory: 32 << 20, MemoryLimit: 32 << 20, OOMKilled: true}}
	var b strings.Builder
	if err := table(&b, "FIELD\tVALUE", qosRows(j)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"qos group", "tiny", "job limits", "memory 32 MiB", "group tiny (cgroup v1)",
		"1.50s used", "its group 0.75s (9 periods)", "read 3 MiB", "counted by process", "32 MiB of 32 MiB (killed at the limit)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("job QoS rows lack %q:\n%s", want, b.String())
		}
	}
}
