package trace

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// TestReadAlibabaSpot2026 reads the fixture, whose 22 rows cover each case
// of the documented reading: HP and Spot jobs of 1 to 8 GPUs on 1, 2 and 4
// workers, several organizations and models, one row per skip reason (two
// for missing times and for non-positive durations). Every figure below is
// worked out from the rows by hand; the earliest kept submission is 0.
func TestReadAlibabaSpot2026(t *testing.T) {
	tr, stats, err := ReadAlibabaSpot2026(readFixture(t, "alibaba_spot_2026_small.csv"), AlibabaSpotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, ms := time.Second, time.Millisecond
	a10 := map[string]string{"gpu_model": "A10"}
	a100 := map[string]string{"gpu_model": "A100-SXM4-80GB"}
	h800 := map[string]string{"gpu_model": "H800"}
	series1 := map[string]string{"gpu_model": "GPU-series-1"}
	want := []Job{
		{Submit: 0, Duration: 3600 * s, Slots: 1, Replicas: 1, Class: jobs.ClassCore, Team: "13", Template: "A10", Requires: a10}, // j0001
		{Submit: 0, Duration: 7200 * s, Slots: 2, Replicas: 1, Class: jobs.ClassCore, Team: "13", Template: "A10", Requires: a10}, // j0002
		{Submit: 250 * s, Duration: 36000 * s, Slots: 8, Replicas: 2, Class: jobs.ClassBurst, Team: "57", Template: "A100-SXM4-80GB", Requires: a100, Checkpointable: true},
		// j0004: decimal times.
		{Submit: 250500 * ms, Duration: 1800250 * ms, Slots: 1, Replicas: 4, Class: jobs.ClassBurst, Team: "57", Template: "A100-SXM4-80GB", Requires: a100, Checkpointable: true},
		// j0006, submitted before j0005 although listed after it; "Search Ads" as a team name.
		{Submit: 900 * s, Duration: 86400 * s, Slots: 8, Replicas: 4, Class: jobs.ClassBurst, Team: "search-ads", Template: "H800", Requires: h800, Checkpointable: true},
		{Submit: 1200 * s, Duration: 5400 * s, Slots: 4, Replicas: 1, Class: jobs.ClassCore, Team: "org_vision", Template: "GPU-series-1", Requires: series1},  // j0005
		{Submit: 1300 * s, Duration: 600 * s, Slots: 1, Replicas: 2, Class: jobs.ClassBurst, Team: "13", Template: "A10", Requires: a10, Checkpointable: true}, // j0007
		// j0008: no gpu_model, so no label and the template "job".
		{Submit: 1500 * s, Duration: 1200 * s, Slots: 2, Replicas: 1, Class: jobs.ClassCore, Team: "99", Template: "job"},
		{Submit: 2000 * s, Duration: 3000 * s, Slots: 4, Replicas: 2, Class: jobs.ClassCore, Team: "57", Template: "A100-SXM4-80GB", Requires: a100}, // j0009
		// j0016: no organization.
		{Submit: 2600 * s, Duration: 60 * s, Slots: 1, Replicas: 1, Class: jobs.ClassBurst, Team: "default", Template: "A10", Requires: a10, Checkpointable: true},
		{Submit: 3000 * s, Duration: 7200 * s, Slots: 8, Replicas: 1, Class: jobs.ClassBurst, Team: "13", Template: "GPU-series-1", Requires: series1, Checkpointable: true}, // j0017
		{Submit: 3100 * s, Duration: 14400 * s, Slots: 4, Replicas: 4, Class: jobs.ClassCore, Team: "99", Template: "H800", Requires: h800},                                  // j0018
		// j0019: job_type "spot" in lower case.
		{Submit: 3200 * s, Duration: 30 * s, Slots: 1, Replicas: 1, Class: jobs.ClassBurst, Team: "13", Template: "A10", Requires: a10, Checkpointable: true},
		{Submit: 3300750 * ms, Duration: 900 * s, Slots: 2, Replicas: 2, Class: jobs.ClassBurst, Team: "57", Template: "A100-SXM4-80GB", Requires: a100, Checkpointable: true}, // j0020
		// j0022: half a T4 takes a whole slot.
		{Submit: 3500 * s, Duration: 600 * s, Slots: 1, Replicas: 1, Class: jobs.ClassCore, Team: "99", Template: "T4", Requires: map[string]string{"gpu_model": "T4"}},
	}
	if !reflect.DeepEqual(tr.Jobs, want) {
		t.Errorf("jobs:\n got %+v\nwant %+v", tr.Jobs, want)
	}
	// Skipped: j0010 (no GPU), j0011 (worker_num 0), j0012 and j0021 (no
	// submit_time, no duration), j0013 and j0014 (duration 0, -5), j0015
	// (job_type Batch, 1 GPU x 600 s).
	wantSkipped := map[SkipReason]int{SkipNoGPU: 1, SkipNoWorkers: 1, SkipMissingTime: 2, SkipNonPositiveDuration: 2, SkipUnknownJobType: 1}
	if stats.Read != 22 || stats.Kept != 15 || !reflect.DeepEqual(stats.Skipped, wantSkipped) {
		t.Errorf("stats = %v, want read 22, kept 15, skipped %v", stats, wantSkipped)
	}
	// GPU-seconds, slots x workers x duration in job order:
	held := 1*3600 + 2*7200 + 8*2*36000 + 1*4*1800.25 + 8*4*86400 + 4*5400 + 1*2*600 + 2*1200 +
		4*2*3000 + 60 + 8*7200 + 4*4*14400 + 30 + 2*2*900 + 600
	if !near(stats.SlotHours, held/3600) || !near(stats.ShareHours, (held-300)/3600) {
		t.Errorf("slot-hours %.6f, want %.6f; share-hours %.6f, want %.6f", stats.SlotHours, held/3600, stats.ShareHours, (held-300)/3600)
	}
	if !reflect.DeepEqual(stats.SkippedSlotHours, map[SkipReason]float64{SkipUnknownJobType: 600.0 / 3600}) {
		t.Errorf("skipped slot-hours %v", stats.SkippedSlotHours)
	}
	if stats.Gangs != 7 || stats.Labelled != 14 {
		t.Errorf("gangs %d labelled %d, want 7 and 14", stats.Gangs, stats.Labelled)
	}
	wantReadings := map[string]int{readSpotWholeGPUs: 14, readSpotFractionalGPUs: 1, readSpotModel: 14, readSpotNoModel: 1}
	if !reflect.DeepEqual(stats.Readings, wantReadings) {
		t.Errorf("readings %v, want %v", stats.Readings, wantReadings)
	}
	wantDetails := []string{
		"kept 1029.9 slot-hours (slots x members x hours), 1029.8 with shared GPUs at their share",
		"skipped slot-hours: unknown job_type 0.2",
		"kept jobs: 7 gangs (jobs of more than one member), 14 requiring worker labels",
		"read: GPUs: fractional gpu_request, rounded up to whole slots 1, GPUs: whole 14, gpu_model: empty, none required 1, gpu_model: required 14",
	}
	if got := stats.Details(); !reflect.DeepEqual(got, wantDetails) {
		t.Errorf("Details() =\n%q\nwant\n%q", got, wantDetails)
	}
	if tr.Name != "alibaba-spot-2026" || !tr.Start.IsZero() {
		t.Errorf("name %q start %v", tr.Name, tr.Start)
	}
	if err := tr.Validate(); err != nil {
		t.Error(err)
	}
	// Jobs of one model share one map.
	if reflect.ValueOf(tr.Jobs[0].Requires).UnsafePointer() != reflect.ValueOf(tr.Jobs[6].Requires).UnsafePointer() {
		t.Error("two A10 jobs hold two maps")
	}
}

func TestReadAlibabaSpot2026Options(t *testing.T) {
	start := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	tr, stats, err := ReadAlibabaSpot2026(readFixture(t, "alibaba_spot_2026_small.csv"),
		AlibabaSpotOptions{Name: "spot", Start: start, CountCPUJobs: true, SpotRestarts: true})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Kept != 16 || stats.Skipped[SkipNoGPU] != 0 || stats.Readings[readSpotCPUJob] != 1 {
		t.Fatalf("stats %v %v", stats, stats.Readings)
	}
	// j0010: 4 vCPUs on one worker, requiring no GPU model.
	cpu := Job{Submit: 2100 * time.Second, Duration: 600 * time.Second, Slots: 4, Replicas: 1, Class: jobs.ClassCore, Team: "13", Template: "A10"}
	if !reflect.DeepEqual(tr.Jobs[9], cpu) {
		t.Errorf("job 9 = %+v, want %+v", tr.Jobs[9], cpu)
	}
	for i, j := range tr.Jobs {
		if j.Checkpointable {
			t.Errorf("job %d is checkpointable with SpotRestarts", i)
		}
	}
	if tr.Name != "spot" || !tr.Start.Equal(start) {
		t.Errorf("name %q start %v", tr.Name, tr.Start)
	}
}

func TestReadAlibabaSpot2026ColumnsByName(t *testing.T) {
	// Reordered, no index, an extra column, spaces in the header, pandas floats.
	in := "job_type, duration,submit_time,worker_num,gpu_request,cpu_request,gpu_model,organization,job_name,note\n" +
		"Spot,60.0,100.0,2.0,4.0,8.0,A10,ML Team!,j1,hi\n"
	tr, _, err := ReadAlibabaSpot2026(strings.NewReader(in), AlibabaSpotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{{Duration: time.Minute, Slots: 4, Replicas: 2, Class: jobs.ClassBurst, Team: "ml-team-", Template: "A10",
		Requires: map[string]string{"gpu_model": "A10"}, Checkpointable: true}}
	if !reflect.DeepEqual(tr.Jobs, want) {
		t.Errorf("got %+v\nwant %+v", tr.Jobs, want)
	}
}

func TestReadAlibabaSpot2026Errors(t *testing.T) {
	const hdr = "job_name,organization,gpu_model,cpu_request,gpu_request,worker_num,submit_time,duration,job_type\n"
	for _, c := range []struct{ in, column, want string }{
		{"", "", "line 1: empty input"},
		{"job_name,organization,gpu_model,gpu_request\n", "", "line 1: header lacks column cpu_request, worker_num, submit_time, duration, job_type"},
		{hdr + "j,1,A10,4,1,1,0,60\n", "", "line 2: has 8 fields, the header 9"},
		{hdr + "j,1,A10,4,one,1,0,60,HP\n", "gpu_request", `line 2: gpu_request: "one" is not a non-negative number`},
		{hdr + "j,1,A10,4,-1,1,0,60,HP\n", "gpu_request", `line 2: gpu_request: "-1" is not a non-negative number`},
		{hdr + "j,1,A10,4,1,1.5,0,60,HP\n", "worker_num", `line 2: worker_num: "1.5" is not a whole number`},
		{hdr + "j,1,A10,4,8,1048576,0,60,HP\n", "worker_num", "line 2: worker_num: 1048576 workers of 8 slots are more than 1048576 slots"},
		{hdr + "j,1,A10,4,1,1,-3,60,HP\n", "submit_time", "line 2: submit_time: must be >= 0"},
		{hdr + "j,1,A10,4,1,1,0,1h,HP\n", "duration", `line 2: duration: "1h" is not a number of seconds`},
		{hdr + "j,1,A10;T4,4,1,1,0,60,HP\n", "gpu_model", `line 2: gpu_model: "A10;T4" cannot be the value of label gpu_model`},
		{hdr + "j,1,A\x0010,4,1,1,0,60,HP\n", "gpu_model", `line 2: gpu_model: "A\x0010" cannot be the value of label gpu_model`},
		{hdr + "j,1,A10,x,0,1,0,60,HP\n", "", ""}, // cpu_request is read only for a CPU job kept
	} {
		_, _, err := ReadAlibabaSpot2026(strings.NewReader(c.in), AlibabaSpotOptions{})
		if c.want == "" {
			if err != nil {
				t.Errorf("%q: %v", c.in, err)
			}
			continue
		}
		var pe *ParseError
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || !errors.As(err, &pe) || pe.Column != c.column {
			t.Errorf("%q:\n got %v\nwant %s (column %q)", c.in, err, c.want, c.column)
		}
	}
	_, _, err := ReadAlibabaSpot2026(strings.NewReader(hdr+"j,1,A10,x,0,1,0,60,HP\n"), AlibabaSpotOptions{CountCPUJobs: true})
	if err == nil || !strings.HasPrefix(err.Error(), `line 2: cpu_request: "x" is not`) {
		t.Errorf("a CPU job kept with a bad cpu_request: %v", err)
	}
}

func TestTeamName(t *testing.T) {
	for in, want := range map[string]string{
		"13":                    "13",
		"Org_Vision":            "org_vision",
		"Search Ads":            "search-ads",
		"  a  b  ":              "a-b-",
		"--x":                   "x",
		"__":                    "default",
		"":                      "default",
		"nan":                   "default",
		"研究部":                   "default",
		"研究 lab":                "lab",
		"a.b-c_d":               "a.b-c_d",
		"x\x00y":                "x-y",
		strings.Repeat("a", 70): strings.Repeat("a", 63),
	} {
		got := teamName([]byte(in))
		if got != want {
			t.Errorf("teamName(%q) = %q, want %q", in, got, want)
		}
		if !validTeam(got) {
			t.Errorf("teamName(%q) = %q is not a team name", in, got)
		}
	}
}

// validTeam is the rule package jobs holds a submission's team to,
// written out again.
func validTeam(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || isDigit(c)
		if !alnum && (i == 0 || (c != '.' && c != '_' && c != '-')) {
			return false
		}
	}
	return true
}
