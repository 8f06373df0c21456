package trace

import (
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func readFixture(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestReadAlibabaGPU2023 reads the fixture, whose 15 rows cover each case
// of the documented reading; every figure below is worked out from the rows
// by hand. The trace end is the latest time in the file, 10769854
// (openb-pod-0017's deletion and openb-pod-0130's creation).
func TestReadAlibabaGPU2023(t *testing.T) {
	tr, stats, err := ReadAlibabaGPU2023(readFixture(t, "openb_pod_list_small.csv"), AlibabaGPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := time.Second
	// Submit is creation_time less the earliest kept creation, openb-pod-0001's 0.
	want := []Job{
		// openb-pod-0001: created and scheduled at 0, the trace start (a
		// 0 there is a time, not "never"); deleted at 3600.
		{Submit: 0, Duration: 3600 * s, Slots: 1, Class: jobs.ClassCore, Team: "openb", Template: "pod", CPUs: 12, Memory: 16384 << 20},
		// batchjob: no dash in the name, gpu_spec "nan"; 9440900 - 9437400.
		{Submit: 9437300 * s, Duration: 3500 * s, Slots: 2, Class: jobs.ClassCore, Team: "default", Template: "pod", CPUs: 4, Memory: 8192 << 20},
		// openb-pod-0017: 8 whole GPUs, 10769854 - 9437497.
		{Submit: 9437497 * s, Duration: 1332357 * s, Slots: 8, Class: jobs.ClassBurst, Team: "openb", Template: "pod", Checkpointable: true, CPUs: 88, Memory: 327680 << 20},
		// openb-pod-0022: a shared GPU (gpu_milli 220), one slot at its share; 9973826 - 9679175.
		{Submit: 9679175 * s, Duration: 294651 * s, Slots: 1, Class: jobs.ClassBurst, Team: "openb", Template: "pod", Checkpointable: true, Share: 220, CPUs: 4, Memory: 15258 << 20},
		// openb-pod-0090: deletion_time 0, running at the trace end; 10769854 - 9800100.
		{Submit: 9800100 * s, Duration: 969754 * s, Slots: 1, Class: jobs.ClassBurst, Team: "openb", Template: "pod", Checkpointable: true, CPUs: 8, Memory: 30517 << 20},
		// openb-pod-0110: Running without a scheduled_time: from its creation, 9917200 - 9910000.
		{Submit: 9910000 * s, Duration: 7200 * s, Slots: 2, Class: jobs.ClassCore, Team: "openb", Template: "pod", CPUs: 4, Memory: 15258 << 20},
		// openb-pod-0035: scheduled 5 s after its creation; 9968575 - 9967063.
		// Its gpu_spec lists two models: it requires either.
		{Submit: 9967058 * s, Duration: 1512 * s, Slots: 1, Class: jobs.ClassCore, Team: "openb", Template: "V100M16|V100M32",
			Requires: map[string]string{"gpu_model": "V100M16|V100M32"}, CPUs: 16, Memory: 32768 << 20},
		// openb-pod-0120: no deletion_time: to the trace end, 10769854 - 10700054.
		// gpu_spec A10 names one model, which the job requires of its worker.
		{Submit: 10700000 * s, Duration: 69800 * s, Slots: 4, Class: jobs.ClassBurst, Team: "openb", Template: "A10", Checkpointable: true,
			Requires: map[string]string{"gpu_model": "A10"}, CPUs: 8, Memory: 30517 << 20},
	}
	if !reflect.DeepEqual(tr.Jobs, want) {
		t.Errorf("jobs:\n got %+v\nwant %+v", tr.Jobs, want)
	}
	// Skipped: openb-pod-0040 (gpu_milli 500, num_gpu 0); openb-pod-0051
	// (CPU only); openb-pod-0063 and -0100 (Pending, no scheduled_time);
	// openb-pod-0081 (qos Unknown); openb-pod-0070 (scheduled when
	// deleted) and -0130 (started at the trace end, still running).
	wantSkipped := map[SkipReason]int{SkipShareWithoutGPU: 1, SkipNoGPU: 1, SkipNeverScheduled: 2, SkipUnknownQoS: 1, SkipNonPositiveDuration: 2}
	if stats.Read != 15 || stats.Kept != 8 || !reflect.DeepEqual(stats.Skipped, wantSkipped) {
		t.Errorf("stats = %v, want read 15, kept 8, skipped %v", stats, wantSkipped)
	}
	// GPU-seconds held by the kept pods, slots x duration in job order:
	heldSeconds := 1*3600 + 2*3500 + 8*1332357 + 1*294651 + 1*969754 + 2*7200 + 1*1512 + 4*69800 // 12228973
	// At their share, openb-pod-0022 holds 0.22 of its GPU, not all of it.
	shareSeconds := float64(heldSeconds) - (1-0.22)*294651
	// Skipped with a span: openb-pod-0100 waited 1 GPU x 3600 s (holding
	// none); openb-pod-0081 held 1 GPU x 600 s. openb-pod-0063 has no
	// deletion time, so no span.
	wantSkippedHours := map[SkipReason]float64{SkipNeverScheduled: 3600.0 / 3600, SkipUnknownQoS: 600.0 / 3600}
	if !near(stats.SlotHours, float64(heldSeconds)/3600) || !near(stats.ShareHours, shareSeconds/3600) ||
		len(stats.SkippedSlotHours) != len(wantSkippedHours) {
		t.Errorf("hours: kept %.6f (want %.6f), at shares %.6f (want %.6f), skipped %v (want %v)", stats.SlotHours,
			float64(heldSeconds)/3600, stats.ShareHours, shareSeconds/3600, stats.SkippedSlotHours, wantSkippedHours)
	}
	for r, h := range wantSkippedHours {
		if !near(stats.SkippedSlotHours[r], h) {
			t.Errorf("skipped %s: %.6f GPU-hours, want %.6f", r, stats.SkippedSlotHours[r], h)
		}
	}
	wantReadings := map[string]int{
		readStartScheduled: 7, readStartCreation: 1, // openb-pod-0110 from its creation
		readEndDeletion: 6, readEndTraceEnd: 2, // openb-pod-0090 and -0120 to the trace end
		readWholeGPUs: 7, readSharedGPU: 1, // openb-pod-0022 shares its GPU
		readModelOne: 1, readModelList: 1, readModelAny: 6, // openb-pod-0120's A10, -0035's V100M16|V100M32
	}
	if !reflect.DeepEqual(stats.Readings, wantReadings) {
		t.Errorf("readings %v, want %v", stats.Readings, wantReadings)
	}
	if got := stats.String(); got != "read 15, kept 8, skipped 7 (gpu_milli without num_gpu 1, never scheduled 2, no GPU 1, non-positive duration 2, unknown qos 1)" {
		t.Errorf("String() = %q", got)
	}
	wantDetails := []string{
		"kept 3396.9 slot-hours (slots x hours), 3333.1 with shared GPUs at their share",
		"skipped slot-hours: never scheduled 1.0 (waited, none held), unknown qos 0.2",
		"kept jobs: 2 requiring worker labels",
		"read: GPUs: shared (gpu_milli < 1000), at their share 1, GPUs: whole 7, end: deletion_time 6, " +
			"end: trace end (no deletion_time) 2, gpu_spec: a list of models, any of them required as gpu_model 1, gpu_spec: empty, none required 6, " +
			"gpu_spec: one model, required as gpu_model 1, start: creation_time (no scheduled_time) 1, start: scheduled_time 7",
	}
	if got := stats.Details(); !reflect.DeepEqual(got, wantDetails) {
		t.Errorf("Details() =\n%q\nwant\n%q", got, wantDetails)
	}
	if tr.Name != "alibaba-gpu-2023" || !tr.Start.IsZero() {
		t.Errorf("name %q start %v", tr.Name, tr.Start)
	}
	if err := tr.Validate(); err != nil {
		t.Error(err)
	}
}

// TestReadAlibabaGPU2023WithoutPhase: without a pod_phase column a pod
// without a scheduled time cannot be told pending, and starts at its
// creation.
func TestReadAlibabaGPU2023WithoutPhase(t *testing.T) {
	in := "name,cpu_milli,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time,scheduled_time\n" +
		"p-1,1000,1,1000,,BE,100,160,\n"
	tr, stats, err := ReadAlibabaGPU2023(strings.NewReader(in), AlibabaGPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{{Submit: 0, Duration: time.Minute, Slots: 1, Class: jobs.ClassBurst, Team: "p", Template: "pod", Checkpointable: true, CPUs: 1}}
	if !reflect.DeepEqual(tr.Jobs, want) || stats.Readings[readStartCreation] != 1 {
		t.Errorf("got %+v, %v %v", tr.Jobs, stats, stats.Readings)
	}
}

func TestReadAlibabaGPU2023CountsCPUPods(t *testing.T) {
	start := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	tr, stats, err := ReadAlibabaGPU2023(readFixture(t, "openb_pod_list_small.csv"), AlibabaGPUOptions{Name: "cpu", Start: start, CountCPUPods: true})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Kept != 9 || stats.Skipped[SkipNoGPU] != 0 || len(tr.Jobs) != 9 || stats.Readings[readCPUPod] != 1 {
		t.Fatalf("stats %v %v, %d jobs", stats, stats.Readings, len(tr.Jobs))
	}
	// openb-pod-0051: 32000 milli-CPUs, created at 9500000, scheduled at
	// 9500010, deleted at 9600000.
	cpu := Job{Submit: 9500000 * time.Second, Duration: 99990 * time.Second, Slots: 32, Class: jobs.ClassBurst, Team: "openb", Template: "pod", Checkpointable: true}
	if !reflect.DeepEqual(tr.Jobs[3], cpu) {
		t.Errorf("job 3 = %+v, want %+v", tr.Jobs[3], cpu)
	}
	if tr.Name != "cpu" || !tr.Start.Equal(start) {
		t.Errorf("name %q start %v", tr.Name, tr.Start)
	}
}

func TestReadAlibabaGPU2023Errors(t *testing.T) {
	const hdr = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	for in, want := range map[string]string{
		"":                         "line 1: empty input",
		"name,cpu_milli,num_gpu\n": "line 1: header lacks column gpu_milli, gpu_spec, qos, creation_time, deletion_time, scheduled_time",
		hdr + "p-1,1000,1,1\n":     "line 2: has 4 fields, the header 11",
		hdr + "p-1,1000,1,x,0,,LS,Running,1,2,1\n":       `line 2: num_gpu: "x" is not a whole number`,
		hdr + "p-1,1000,1,1,0,,LS,Running,1,2s,1\n":      `line 2: deletion_time: "2s" is not a number of seconds`,
		hdr + "p-1,1000,1,1,0,,LS,Running,-1,2,1\n":      "line 2: creation_time: must be >= 0",
		hdr + "p-1,1000,1,1,0,\"V100,LS,Running,1,2,1\n": "line 2: field 6: quote not closed",
	} {
		_, _, err := ReadAlibabaGPU2023(strings.NewReader(in), AlibabaGPUOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %s", in, err, want)
		}
	}
}

func TestReadAlibabaGPU2023ExtraColumns(t *testing.T) {
	// pandas writes its index as a nameless first column; a reordered or
	// widened file still reads by column name.
	in := ",qos,name,num_gpu,gpu_milli,cpu_milli,gpu_spec,creation_time,scheduled_time,deletion_time,note\n" +
		"0,LS,team-x-1,2.0,1000,4000,T4,100.0,110.0,170.0,hi\n"
	tr, stats, err := ReadAlibabaGPU2023(strings.NewReader(in), AlibabaGPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{{Submit: 0, Duration: time.Minute, Slots: 2, Class: jobs.ClassCore, Team: "team", Template: "T4", Requires: map[string]string{"gpu_model": "T4"}, CPUs: 4}}
	if !reflect.DeepEqual(tr.Jobs, want) || stats.Kept != 1 || len(stats.Skipped) != 0 {
		t.Errorf("got %+v, %v", tr.Jobs, stats)
	}
}

// TestReadAlibabaGPU2023SlotsAndModels: num_gpu is the job's slots; a
// shared GPU (num_gpu 1, gpu_milli < 1000) takes one whole slot, since a
// worker binds whole GPUs, and counts at its share only in ShareHours; a
// gpu_spec of one model is required as the gpu_model label, a list of
// models as a requirement any of them meets, none requires nothing.
func TestReadAlibabaGPU2023SlotsAndModels(t *testing.T) {
	in := "name,cpu_milli,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time,scheduled_time\n" +
		"a-1,1000,1,250,T4,LS,0,3600,0\n" + // a quarter of one T4
		"a-2,1000,1,1000,V100M16|V100M32,LS,0,3600,0\n" + // one whole GPU of either model
		"a-3,1000,8,1000,,LS,0,3600,0\n" + // eight GPUs of any model
		"a-4,1000,2,,A100-SXM4-80GB,LS,0,3600,0\n" // no gpu_milli: whole GPUs
	tr, stats, err := ReadAlibabaGPU2023(strings.NewReader(in), AlibabaGPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		slots, replicas int
		requires        map[string]string
	}
	want := []got{{1, 0, map[string]string{"gpu_model": "T4"}}, {1, 0, map[string]string{"gpu_model": "V100M16|V100M32"}}, {8, 0, nil}, {2, 0, map[string]string{"gpu_model": "A100-SXM4-80GB"}}}
	for i, j := range tr.Jobs {
		if g := (got{j.Slots, j.Replicas, j.Requires}); !reflect.DeepEqual(g, want[i]) {
			t.Errorf("job %d (a-%d): %+v, want %+v", i, i+1, g, want[i])
		}
	}
	if tr.Jobs[0].Share != 250 || tr.Jobs[1].Share != 0 || tr.Jobs[0].GPUs() != 0.25 {
		t.Errorf("the quarter T4 pod: share %d (%.2f GPUs); the whole one %d", tr.Jobs[0].Share, tr.Jobs[0].GPUs(), tr.Jobs[1].Share)
	}
	// 12 GPU-hours held as slots; at shares the T4 pod holds a quarter.
	if !near(stats.SlotHours, 12) || !near(stats.ShareHours, 11.25) || stats.Readings[readSharedGPU] != 1 ||
		stats.Labelled != 3 || stats.Gangs != 0 {
		t.Errorf("stats %v: slot-hours %v, share-hours %v, readings %v, labelled %d", stats, stats.SlotHours, stats.ShareHours, stats.Readings, stats.Labelled)
	}
	// A gpu_spec that cannot be a label value is not this format.
	bad := "name,cpu_milli,num_gpu,gpu_milli,gpu_spec,qos,creation_time,deletion_time,scheduled_time\na-1,1000,1,1000,T4;A10,LS,0,3600,0\n"
	if _, _, err := ReadAlibabaGPU2023(strings.NewReader(bad), AlibabaGPUOptions{}); err == nil ||
		!strings.HasPrefix(err.Error(), `line 2: gpu_spec: "T4;A10" cannot be the value of label gpu_model`) {
		t.Errorf("err = %v", err)
	}
}
