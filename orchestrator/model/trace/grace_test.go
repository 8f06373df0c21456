package trace

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// A job's grace survives the round trip in the optional grace_s column,
// which WriteCSV adds only when some job has one, and a file may carry it
// alone after the base columns.
func TestCSVGraceColumn(t *testing.T) {
	in := Trace{Name: "g", Jobs: []Job{
		{Duration: time.Hour, Slots: 1, Class: jobs.ClassCore, Team: "a", Template: "x", Checkpointable: true, Grace: 30 * time.Second},
		{Duration: time.Hour, Slots: 1, Class: jobs.ClassCore, Team: "b", Template: "x"},
	}}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), ",grace_s\n") || !strings.Contains(buf.String(), ",30\n") {
		t.Fatalf("no grace_s column written:\n%s", buf.String())
	}
	out, err := ReadCSV(&buf, "g")
	if err != nil {
		t.Fatal(err)
	}
	if out.Jobs[0].Grace != 30*time.Second || out.Jobs[1].Grace != 0 {
		t.Errorf("graces read back %v and %v, want 30s and 0", out.Jobs[0].Grace, out.Jobs[1].Grace)
	}
	only := csvHeader + ",grace_s\n0,60,1,core,a,x,true,,12.5\n"
	tr, err := ReadCSV(strings.NewReader(only), "only")
	if err != nil || tr.Jobs[0].Grace != 12500*time.Millisecond {
		t.Errorf("grace_s alone: %v, %+v", err, tr.Jobs)
	}
	if _, err := ReadCSV(strings.NewReader(csvHeader+",grace_s\n0,60,1,core,a,x,true,,-1\n"), "neg"); err == nil ||
		!strings.Contains(err.Error(), "grace_s") {
		t.Errorf("a negative grace read with error %v, want one naming grace_s", err)
	}
	var none bytes.Buffer
	if err := WriteCSV(&none, Trace{Jobs: in.Jobs[1:]}); err != nil || strings.Contains(none.String(), "grace_s") {
		t.Errorf("a trace without grace wrote %q (%v); want no grace_s column", none.String(), err)
	}
}
