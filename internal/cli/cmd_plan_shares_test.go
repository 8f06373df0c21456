package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/analysis/planner"
	"github.com/ballastdev/ballast/orchestrator/model/trace"
)

// plan --shares sizes a share per team from a trace without simulating:
// over ten hours a holds 2 slots, b 6 for the first hour, so at the 95th
// percentile on a quota of 6 the 8 slots asked for are scaled to 2 and 4
// (1.5 and 4.5, the odd slot to the earlier name on a tie).
func TestPlanSizesShares(t *testing.T) {
	tr := trace.Trace{Name: "teams", Jobs: []trace.Job{
		{Team: "a", Slots: 2, Submit: 0, Duration: 10 * time.Hour, Class: "core"},
		{Team: "b", Slots: 6, Submit: 0, Duration: time.Hour, Class: "burst"},
	}}
	path := filepath.Join(t.TempDir(), "teams.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := trace.WriteCSV(f, tr); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, out, errOut := run(t, "plan", "--trace", path, "--shares", "--quota", "6", "--share-percentile", "95", "-o", "json")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	var s planner.ShareSizes
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if s.Quota != 6 || !s.Scaled || len(s.Teams) != 2 || s.Teams[0].Slots+s.Teams[1].Slots != 6 ||
		s.Teams[0].Percentile != 2 || s.Teams[1].Percentile != 6 {
		t.Fatalf("sizes %+v", s)
	}
	code, out, errOut = run(t, "plan", "--trace", path, "--shares", "--quota", "10")
	if code != 0 {
		t.Fatalf("table: code %d: %s", code, errOut)
	}
	for _, want := range []string{"P90", "SHARE", "(common)", "shares.teams.NAME.slots"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if code, _, errOut := run(t, "plan", "--trace", path, "--shares", "--share-percentile", "0"); code != 2 || !strings.Contains(errOut, "--share-percentile 0") {
		t.Errorf("percentile 0: code %d %q", code, errOut)
	}
}
