package trace

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/jobs"
)

func readFixture(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestReadAlibabaGPU2023(t *testing.T) {
	tr, stats, err := ReadAlibabaGPU2023(readFixture(t, "openb_pod_list_small.csv"), AlibabaGPUOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := time.Second
	want := []Job{
		// openb-pod-0040: a shared GPU (num_gpu 0, gpu_milli 500), the earliest creation.
		{Submit: 0, Duration: 500 * s, Slots: 1, Class: jobs.ClassCore, Team: "openb", Template: "pod"},
		// batchjob: no dash in the name, gpu_spec "nan".
		{Submit: 300 * s, Duration: 3500 * s, Slots: 2, Class: jobs.ClassCore, Team: "default", Template: "pod"},
		{Submit: 497 * s, Duration: 1332357 * s, Slots: 8, Class: jobs.ClassBurst, Team: "openb", Template: "pod", Checkpointable: true},
		{Submit: 242175 * s, Duration: 294651 * s, Slots: 1, Class: jobs.ClassBurst, Team: "openb", Template: "pod", Checkpointable: true},
		{Submit: 530058 * s, Duration: 1512 * s, Slots: 1, Class: jobs.ClassCore, Team: "openb", Template: "V100M16|V100M32"},
	}
	if !reflect.DeepEqual(tr.Jobs, want) {
		t.Errorf("jobs:\n got %+v\nwant %+v", tr.Jobs, want)
	}
	wantStats := ImportStats{Read: 10, Kept: 5, Skipped: map[SkipReason]int{
		SkipNoGPU: 1, SkipMissingTime: 2, SkipNonPositiveDuration: 1, SkipUnknownQoS: 1,
	}}
	if !reflect.DeepEqual(stats, wantStats) {
		t.Errorf("stats = %v, want %v", stats, wantStats)
	}
	if got := stats.String(); got != "read 10, kept 5, skipped 5 (missing time 2, no GPU 1, non-positive duration 1, unknown qos 1)" {
		t.Errorf("String() = %q", got)
	}
	if tr.Name != "alibaba-gpu-2023" || !tr.Start.IsZero() {
		t.Errorf("name %q start %v", tr.Name, tr.Start)
	}
	if err := tr.Validate(); err != nil {
		t.Error(err)
	}
}

func TestReadAlibabaGPU2023CountsCPUPods(t *testing.T) {
	start := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	tr, stats, err := ReadAlibabaGPU2023(readFixture(t, "openb_pod_list_small.csv"), AlibabaGPUOptions{Name: "cpu", Start: start, CountCPUPods: true})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Kept != 6 || stats.Skipped[SkipNoGPU] != 0 || len(tr.Jobs) != 6 {
		t.Fatalf("stats %v, %d jobs", stats, len(tr.Jobs))
	}
	// openb-pod-0051: 32000 milli-CPUs, created 63000 s after the first pod.
	cpu := Job{Submit: 63000 * time.Second, Duration: 99990 * time.Second, Slots: 32, Class: jobs.ClassBurst, Team: "openb", Template: "pod", Checkpointable: true}
	if tr.Jobs[3] != cpu {
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
	want := []Job{{Submit: 0, Duration: time.Minute, Slots: 2, Class: jobs.ClassCore, Team: "team", Template: "T4"}}
	if !reflect.DeepEqual(tr.Jobs, want) || stats.Kept != 1 || len(stats.Skipped) != 0 {
		t.Errorf("got %+v, %v", tr.Jobs, stats)
	}
}
