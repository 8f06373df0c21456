package trace

import (
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// The fixture's days, in UTC+8, start at 4464000 + k*86400 seconds; its
// users are:
//
//	u_daily  a job on each of the 4 days          -> core
//	u_twice  jobs on days 0 and 2 (2 of 4 = 50%)  -> core
//	u_night  23:59 on day 0 and 00:01 on day 1    -> core; the same day in UTC
//	u_adhoc  two jobs on day 1                    -> burst
func TestReadPAI2020(t *testing.T) {
	tr, stats, err := ReadPAI2020(readFixture(t, "pai_job_table_small.csv"), PAIOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := time.Second
	core := func(at, d time.Duration, user string) Job {
		return Job{Submit: at, Duration: d, Slots: 1, Class: jobs.ClassCore, Team: user, Template: "pai"}
	}
	burst := func(at, d time.Duration, user string) Job {
		return Job{Submit: at, Duration: d, Slots: 1, Class: jobs.ClassBurst, Team: user, Template: "pai", Checkpointable: true}
	}
	want := []Job{
		core(0, 1800*s, "u_daily"),
		core(36400*s, 100*s, "u_twice"),
		core(82740*s, 600*s, "u_night"),
		core(82860*s, 600*s, "u_night"),
		core(86400*s, 1800*s, "u_daily"),
		burst(132800*s, 600*s, "u_adhoc"),
		burst(132810*s, 7200*s, "u_adhoc"),
		core(172800*s, 1800*s, "u_daily"),
		core(209200*s, 100*s, "u_twice"),
		core(259200*s, 1800*s, "u_daily"),
	}
	if !reflect.DeepEqual(tr.Jobs, want) {
		t.Errorf("jobs:\n got %+v\nwant %+v", tr.Jobs, want)
	}
	wantStats := ImportStats{Read: 14, Kept: 10, Skipped: map[SkipReason]int{
		SkipStatus: 1, SkipMissingTime: 2, SkipNonPositiveDuration: 1,
	}}
	if !reflect.DeepEqual(stats, wantStats) {
		t.Errorf("stats = %v, want %v", stats, wantStats)
	}
	// 4467600 s is 1970-02-22 01:00 in UTC+8, a Sunday; the date is fake,
	// the time of day and weekday are the real ones.
	wantStart := time.Date(1970, 2, 22, 1, 0, 0, 0, time.FixedZone("UTC+8", 8*3600))
	if !tr.Start.Equal(wantStart) || tr.Start.Hour() != 1 || tr.Start.Weekday() != time.Sunday {
		t.Errorf("start = %v, want %v", tr.Start, wantStart)
	}
	if tr.Name != "pai-2020" {
		t.Errorf("name %q", tr.Name)
	}
	if err := tr.Validate(); err != nil {
		t.Error(err)
	}
}

func TestReadPAI2020CoreDayShare(t *testing.T) {
	// At 75% a user needs 3 of the 4 days: only u_daily qualifies.
	tr, _, err := ReadPAI2020(readFixture(t, "pai_job_table_small.csv"), PAIOptions{CoreDayShare: 0.75})
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string]jobs.Class{}
	for _, j := range tr.Jobs {
		classes[j.Team] = j.Class
	}
	want := map[string]jobs.Class{"u_daily": jobs.ClassCore, "u_twice": jobs.ClassBurst, "u_night": jobs.ClassBurst, "u_adhoc": jobs.ClassBurst}
	if !reflect.DeepEqual(classes, want) {
		t.Errorf("classes = %v, want %v", classes, want)
	}
}

func TestReadPAI2020OneDayIsNotARhythm(t *testing.T) {
	in := "j1,i1,u,Terminated,100,200\nj2,i2,u,Terminated,300,400\n"
	tr, _, err := ReadPAI2020(strings.NewReader(in), PAIOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range tr.Jobs {
		if j.Class != jobs.ClassBurst {
			t.Errorf("%+v: a user seen on one day is not periodic", j)
		}
	}
}

func TestReadPAI2020SkipsPublishedHeader(t *testing.T) {
	f := readFixture(t, "pai_job_table_small.csv")
	withHeader := io.MultiReader(strings.NewReader(paiHeader+"\n"), f)
	tr, stats, err := ReadPAI2020(withHeader, PAIOptions{Name: "h"})
	if err != nil {
		t.Fatal(err)
	}
	if stats.Read != 14 || len(tr.Jobs) != 10 || tr.Name != "h" {
		t.Errorf("stats %v, %d jobs, name %q", stats, len(tr.Jobs), tr.Name)
	}
}

func TestReadPAI2020Errors(t *testing.T) {
	for in, want := range map[string]string{
		"j,i,u,Terminated,1\n":                        "line 1: has 5 fields, want 6",
		"j,i,u,Terminated,1,2\nj,i,u,Failed,x,2\n":    `line 2: start_time: "x" is not a number of seconds`,
		"j,i,u,Terminated,1,2\n\nj,i,u,Failed,1,-2\n": "line 3: end_time: must be >= 0",
	} {
		_, _, err := ReadPAI2020(strings.NewReader(in), PAIOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %s", in, err, want)
		}
	}
	if _, _, err := ReadPAI2020(strings.NewReader(""), PAIOptions{CoreDayShare: 2}); err == nil {
		t.Error("CoreDayShare 2 accepted")
	}
}

func TestReadPAI2020Empty(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, stats, err := ReadPAI2020(f, PAIOptions{})
	if err != nil || len(tr.Jobs) != 0 || stats.Read != 0 || !tr.Start.IsZero() {
		t.Errorf("got %+v, %v, %v", tr, stats, err)
	}
}

// A user with a control character becomes no team: the line and column
// are named (found by FuzzReadPAI2020: a lone carriage return).
func TestPAIRefusesControlCharactersInNames(t *testing.T) {
	_, _, err := ReadPAI2020(strings.NewReader("j1,i1,u\r1,Terminated,0,10\n"), PAIOptions{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 1 || pe.Column != "user" {
		t.Fatalf("err %v, want a ParseError at line 1, column user", err)
	}
}
