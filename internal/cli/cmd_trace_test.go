package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// TestTraceImportPrintsGPUHours: importing the Alibaba GPU fixture says
// how many GPU-hours were read and skipped, and how each field was read,
// so the import can be checked against the raw file.
func TestTraceImportPrintsGPUHours(t *testing.T) {
	code, out, errOut := run(t, "trace", "--alibaba-gpu", "../../orchestrator/model/trace/testdata/openb_pod_list_small.csv")
	if code != 0 || !strings.HasPrefix(out, "submit_s,") {
		t.Fatalf("code %d err %q", code, errOut)
	}
	for _, want := range []string{
		"read 15, kept 8, skipped 7",
		"kept 3396.9 GPU-hours (slots x hours), 3333.1 with shared GPUs at their share",
		"skipped GPU-hours: never scheduled 1.0 (waited, none held), unknown qos 0.2",
		"end: trace end (no deletion_time) 2",
		"start: creation_time (no scheduled_time) 1",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// TestTraceImportsSpotGangs: importing the Alibaba spot-GPU fixture writes
// a CSV whose rows carry the gangs (replicas) and the GPU models the jobs
// require, and reads back as the importer's trace.
func TestTraceImportsSpotGangs(t *testing.T) {
	const fixture = "../../orchestrator/model/trace/testdata/alibaba_spot_2026_small.csv"
	out := filepath.Join(t.TempDir(), "x.csv")
	code, stdout, errOut := run(t, "trace", "--alibaba-spot", fixture, "--out", out)
	if code != 0 || stdout != "" {
		t.Fatalf("code %d stdout %q stderr %q", code, stdout, errOut)
	}
	for _, want := range []string{
		"read 22, kept 15, skipped 7",
		"kept 1029.9 GPU-hours (slots x members x hours)",
		"kept jobs: 7 gangs (jobs of more than one member), 14 requiring worker labels",
		"15 jobs over",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if lines[0] != "submit_s,duration_s,slots,class,team,template,checkpointable,deadline_s,replicas,requires" {
		t.Fatalf("header %q", lines[0])
	}
	// j0006: a Spot gang of 4 workers of 8 H800 GPUs from "Search Ads".
	if want := "900,86400,8,burst,search-ads,H800,true,,4,gpu_model=H800"; !slices.Contains(lines, want) {
		t.Errorf("no row %q in\n%s", want, b)
	}
	back, err := trace.ReadCSV(strings.NewReader(string(b)), "x")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	direct, _, err := trace.ReadAlibabaSpot2026(f, trace.AlibabaSpotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Jobs, direct.Jobs) {
		t.Errorf("the CSV reads back as\n%+v\nnot the imported\n%+v", back.Jobs, direct.Jobs)
	}
}

func TestTraceSourceNamesEveryKind(t *testing.T) {
	code, _, errOut := run(t, "trace", "--alibaba-spot", "a.csv", "--pai", "b.csv")
	if code != 2 || !strings.Contains(errOut, "--alibaba-gpu FILE, --alibaba-spot FILE, --pai FILE") {
		t.Errorf("code %d, stderr %q", code, errOut)
	}
	for _, cmd := range []string{"trace", "simulate", "plan"} {
		code, out, errOut := run(t, cmd, "-h")
		if !strings.Contains(out+errOut, "--alibaba-spot FILE") || !strings.Contains(out+errOut, "job_info_df.csv") {
			t.Errorf("%s -h (code %d) does not show --alibaba-spot:\n%s%s", cmd, code, out, errOut)
		}
	}
}
