package trace

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// Gangs (Replicas) and required labels (Requires) in the CSV format, in
// Validate and in Demand.

const sizedHeader = csvHeader + ",replicas,requires\n"

func TestCSVRoundTripSized(t *testing.T) {
	a10 := map[string]string{"gpu_model": "A10"}
	in := Trace{Name: "sized", Jobs: []Job{
		{Duration: time.Second, Slots: 1, Class: jobs.ClassCore, Team: "t", Template: "x"},
		{Duration: time.Second, Slots: 2, Class: jobs.ClassBurst, Team: "t", Template: "x", Replicas: 4, Requires: a10},
		{Duration: time.Second, Slots: 8, Class: jobs.ClassBurst, Team: "t", Template: "x", Replicas: 1},
		{Duration: time.Second, Slots: 1, Class: jobs.ClassCore, Team: "t", Template: "x",
			Requires: map[string]string{"zone": "a=b", "gpu_model": "A100-SXM4-80GB", "note": `x, "y"`}},
		{Duration: time.Second, Slots: 1, Class: jobs.ClassCore, Team: "t", Template: "x", Replicas: MaxSlots},
	}}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, in); err != nil {
		t.Fatal(err)
	}
	// Keys are sorted; a value with a comma or quote quotes the cell.
	want := sizedHeader +
		"0,1,1,core,t,x,false,,,\n" +
		"0,1,2,burst,t,x,false,,4,gpu_model=A10\n" +
		"0,1,8,burst,t,x,false,,1,\n" +
		"0,1,1,core,t,x,false,,,\"gpu_model=A100-SXM4-80GB;note=x, \"\"y\"\";zone=a=b\"\n" +
		"0,1,1,core,t,x,false,,1048576,\n"
	if buf.String() != want {
		t.Errorf("wrote\n%s\nwant\n%s", buf.String(), want)
	}
	out, err := ReadCSV(&buf, "sized")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.Jobs, in.Jobs) {
		t.Errorf("jobs differ after the round trip:\n got %+v\nwant %+v", out.Jobs, in.Jobs)
	}
}

// TestWriteCSVUnsizedKeepsOldHeader: a trace without gangs or labels is
// written exactly as before the optional columns existed.
func TestWriteCSVUnsizedKeepsOldHeader(t *testing.T) {
	var buf bytes.Buffer
	err := WriteCSV(&buf, Trace{Jobs: []Job{{Duration: time.Second, Slots: 1, Class: jobs.ClassCore, Team: "t", Template: "x", Requires: map[string]string{}}}})
	if err != nil {
		t.Fatal(err)
	}
	if want := header + "0,1,1,core,t,x,false,\n"; buf.String() != want {
		t.Errorf("wrote %q, want %q", buf.String(), want)
	}
}

func TestReadCSVOptionalColumns(t *testing.T) {
	base := Job{Submit: time.Second, Duration: 2 * time.Second, Slots: 2, Class: jobs.ClassCore, Team: "t", Template: "x"}
	gang, labelled := base, base
	gang.Replicas = 3
	labelled.Requires = map[string]string{"gpu_model": "T4"}
	for _, c := range []struct {
		in   string
		want []Job
	}{
		{header + "1,2,2,core,t,x,false,\n", []Job{base}},
		{csvHeader + ",replicas\n" + "1,2,2,core,t,x,false,,3\n1,2,2,core,t,x,false,,\n", []Job{gang, base}},
		{csvHeader + ",requires\n" + "1,2,2,core,t,x,false,,gpu_model=T4\n", []Job{labelled}},
		{sizedHeader + "1,2,2,core,t,x,false,,0,\n1,2,2,core,t,x,false,,,gpu_model=T4\n", []Job{base, labelled}},
	} {
		tr, err := ReadCSV(strings.NewReader(c.in), "o")
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(tr.Jobs, c.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", c.in, tr.Jobs, c.want)
		}
	}
}

func TestReadCSVSizedErrors(t *testing.T) {
	for _, c := range []struct {
		in, column, want string
	}{
		{csvHeader + ",requires,replicas\n", "", `line 1: header is "` + csvHeader + `,requires,replicas", want`},
		{sizedHeader + "1,2,1,core,t,x,false,\n", "", "line 2: has 8 fields, want 10"},
		{sizedHeader + "1,2,1,core,t,x,false,,-1,\n", "replicas", `line 2: replicas: "-1" is not a whole number`},
		{sizedHeader + "1,2,1,core,t,x,false,,2.5,\n", "replicas", `line 2: replicas: "2.5" is not a whole number`},
		{sizedHeader + "1,2,2,core,t,x,false,,1048576,\n", "replicas", "line 2: replicas: 1048576 members of 2 slots are more than 1048576 slots"},
		{sizedHeader + "1,2,1,core,t,x,false,,,gpu_model\n", "requires", `line 2: requires: "gpu_model" is not key=value`},
		{sizedHeader + "1,2,1,core,t,x,false,,,a=1;\n", "requires", `line 2: requires: "" is not key=value`},
		{sizedHeader + "1,2,1,core,t,x,false,,,a=\n", "requires", `line 2: requires: a: value "" is empty`},
		{sizedHeader + "1,2,1,core,t,x,false,,,a=1;a=2\n", "requires", `line 2: requires: key "a" appears twice`},
		{sizedHeader + "1,2,1,core,t,x,false,,, a=1\n", "requires", `line 2: requires: key " a" uses other than letters`},
		{sizedHeader + "1,2,1,core,t,x,false,,,-a=1\n", "requires", `line 2: requires: key "-a" uses other than letters`},
		{sizedHeader + "1,2,1,core,t,x,false,,,a=\x01\n", "requires", `line 2: requires: a: value "\x01" contains the control character`},
		{sizedHeader + "1,2,1,core,t,x,false,,,a=" + strings.Repeat("v", MaxRequireValueBytes+1) + "\n", "requires", "line 2: requires: a: value"},
		{sizedHeader + "1,2,1,core,t,x,false,,," + manyLabels(MaxRequires+1) + "\n", "requires", "line 2: requires: more than 32 labels"},
	} {
		_, err := ReadCSV(strings.NewReader(c.in), "bad")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%.70q:\n got %v\nwant %s...", c.in, err, c.want)
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Column != c.column {
			t.Errorf("%.70q: got %#v, want column %q", c.in, pe, c.column)
		}
	}
	// As many labels as a submission may carry are fine.
	if _, err := ReadCSV(strings.NewReader(sizedHeader+"1,2,1,core,t,x,false,,,"+manyLabels(MaxRequires)+"\n"), "ok"); err != nil {
		t.Error(err)
	}
}

func manyLabels(n int) string {
	var parts []string
	for i := range n {
		parts = append(parts, "k"+strings.Repeat("x", i)+"=v")
	}
	return strings.Join(parts, ";")
}

// TestReadCSVSharesRequires: jobs whose requires cells are the same text
// share one map.
func TestReadCSVSharesRequires(t *testing.T) {
	in := sizedHeader + strings.Repeat("1,2,1,core,t,x,false,,,gpu_model=A10\n", 3) + "1,2,1,core,t,x,false,,,gpu_model=T4\n"
	tr, err := ReadCSV(strings.NewReader(in), "s")
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b map[string]string) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	if !same(tr.Jobs[0].Requires, tr.Jobs[2].Requires) || same(tr.Jobs[0].Requires, tr.Jobs[3].Requires) {
		t.Error("equal requires cells are not one shared map, or different ones are")
	}
}

func TestValidateSized(t *testing.T) {
	ok := Job{Duration: time.Second, Slots: 2, Class: jobs.ClassCore}
	for want, mutate := range map[string]func(*Job){
		"replicas: -1 is outside [0, 1048576]":                         func(j *Job) { j.Replicas = -1 },
		"replicas: 524289 members of 2 slots are more than 1048576":    func(j *Job) { j.Replicas = MaxSlots/2 + 1 },
		`requires: key "" is not 1 to 63 characters`:                   func(j *Job) { j.Requires = map[string]string{"": "x"} },
		`requires: key "a b" uses other than letters`:                  func(j *Job) { j.Requires = map[string]string{"a b": "x"} },
		`requires: a: value "x;y" holds a ';', which separates labels`: func(j *Job) { j.Requires = map[string]string{"a": "x;y"} },
		`requires: a: value "" is empty`:                               func(j *Job) { j.Requires = map[string]string{"a": ""} },
		`requires: a: value "\n" contains the control character`:       func(j *Job) { j.Requires = map[string]string{"a": "\n"} },
	} {
		j := ok
		mutate(&j)
		err := Trace{Jobs: []Job{j}}.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
		var buf bytes.Buffer
		if err := WriteCSV(&buf, Trace{Jobs: []Job{j}}); err == nil || buf.Len() != 0 {
			t.Errorf("%s: WriteCSV wrote %q, err %v", want, buf.String(), err)
		}
	}
	ok.Replicas = MaxSlots / 2
	ok.Requires = map[string]string{"gpu_model": "A100-SXM4-80GB", "k8s.io/zone-a_1": "x=y"}
	if err := (Trace{Jobs: []Job{ok}}).Validate(); err != nil {
		t.Errorf("a valid gang: %v", err)
	}
}

// TestWriteCSVRefusesTooLongLine: labels can make a line longer than
// ReadCSV takes; WriteCSV says so rather than write a file it cannot read.
func TestWriteCSVRefusesTooLongLine(t *testing.T) {
	req := map[string]string{}
	for i := range MaxRequires {
		req[strings.Repeat("k", 40)+string(rune('a'+i%26))+string(rune('a'+i/26))] = strings.Repeat("v", MaxRequireValueBytes)
	}
	var buf bytes.Buffer
	err := WriteCSV(&buf, Trace{Name: "long", Jobs: []Job{{Duration: time.Second, Slots: 1, Class: jobs.ClassCore, Requires: req}}})
	if err == nil || !strings.Contains(err.Error(), "more than the 4096 ReadCSV takes") || buf.Len() != 0 {
		t.Errorf("err %v, wrote %d bytes", err, buf.Len())
	}
}

func TestMembersAndDemandOfGangs(t *testing.T) {
	for _, c := range []struct{ replicas, members int }{{0, 1}, {1, 1}, {4, 4}} {
		j := Job{Slots: 2, Replicas: c.replicas}
		if j.Members() != c.members || j.TotalSlots() != 2*c.members {
			t.Errorf("replicas %d: members %d, total slots %d", c.replicas, j.Members(), j.TotalSlots())
		}
	}
	// A gang of 3 members of 2 slots holds 6 slots while it runs.
	tr := Trace{Jobs: []Job{
		{Submit: 0, Duration: sec(2), Slots: 2, Replicas: 3, Class: jobs.ClassBurst},
		{Submit: sec(1), Duration: sec(2), Slots: 1, Class: jobs.ClassCore},
	}}
	if got, want := tr.Demand(sec(1)), []int{6, 7, 1}; !slices.Equal(got, want) {
		t.Errorf("Demand = %v, want %v", got, want)
	}
}
