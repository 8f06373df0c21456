package trace

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

const header = csvHeader + "\n"

func TestCSVRoundTrip(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	for _, start := range []time.Time{
		{},
		time.Date(2025, 3, 30, 1, 0, 0, 0, berlin), // the night clocks change
		time.Date(2025, 4, 1, 0, 0, 0, 123456789, time.UTC),
		time.Date(2025, 4, 1, 0, 0, 0, 0, time.FixedZone("UTC+8", 8*3600)),
	} {
		in := Trace{Name: "rt", Start: start, Jobs: []Job{
			{Submit: 0, Duration: time.Millisecond, Slots: 1, Class: jobs.ClassCore, Team: "data", Template: "etl", Deadline: 4 * time.Hour},
			{Submit: 1500 * time.Millisecond, Duration: 90 * time.Second, Slots: 8, Class: jobs.ClassBurst, Team: "search, web", Template: `say "hi"`, Checkpointable: true},
			{Submit: 1500 * time.Millisecond, Duration: time.Nanosecond, Slots: MaxSlots, Class: jobs.ClassBurst, Team: "", Template: "ünïcode"},
			{Submit: 29*24*time.Hour + 999*time.Millisecond, Duration: 1234567891 * time.Nanosecond, Slots: 3, Class: jobs.ClassCore, Team: "#not-a-comment", Template: " spaced ", Deadline: time.Nanosecond},
			{Submit: MaxOffset, Duration: MaxOffset, Slots: 2, Class: jobs.ClassCore, Team: "t", Template: "x"},
		}}
		var buf bytes.Buffer
		if err := WriteCSV(&buf, in); err != nil {
			t.Fatal(err)
		}
		out, err := ReadCSV(&buf, "rt")
		if err != nil {
			t.Fatalf("start %v: %v\n%s", start, err, buf.String())
		}
		if !reflect.DeepEqual(out.Jobs, in.Jobs) {
			t.Errorf("start %v: jobs differ after the round trip:\n got %+v\nwant %+v", start, out.Jobs, in.Jobs)
		}
		if !out.Start.Equal(in.Start) || out.Start.Format(time.RFC3339Nano) != in.Start.Format(time.RFC3339Nano) {
			t.Errorf("start %v: read back as %v", start, out.Start)
		}
		if start.Location() == berlin && out.Start.Location().String() != "Europe/Berlin" {
			t.Errorf("zone %v read back as %v", start.Location(), out.Start.Location())
		}
	}
}

func TestWriteCSVFormat(t *testing.T) {
	in := Trace{Jobs: []Job{
		{Submit: 12500 * time.Millisecond, Duration: 900 * time.Second, Slots: 1, Class: jobs.ClassBurst, Team: "ml", Template: "train", Checkpointable: true},
		{Submit: 60 * time.Second, Duration: 250 * time.Millisecond, Slots: 2, Class: jobs.ClassCore, Team: "a,b", Template: "x", Deadline: 90 * time.Minute},
	}}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, in); err != nil {
		t.Fatal(err)
	}
	want := header +
		"12.5,900,1,burst,ml,train,true,\n" +
		"60,0.25,2,core,\"a,b\",x,false,5400\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestWriteCSVRejectsBadJobs(t *testing.T) {
	ok := Job{Duration: time.Second, Slots: 1, Class: jobs.ClassCore}
	for name, mutate := range map[string]func(*Job){
		"zero duration": func(j *Job) { j.Duration = 0 },
		"no slots":      func(j *Job) { j.Slots = 0 },
		"no class":      func(j *Job) { j.Class = "" },
		"negative":      func(j *Job) { j.Submit = -time.Second },
		"line break":    func(j *Job) { j.Team = "a\nb" },
	} {
		j := ok
		mutate(&j)
		var buf bytes.Buffer
		if err := WriteCSV(&buf, Trace{Name: "bad", Jobs: []Job{ok, j}}); err == nil || !strings.Contains(err.Error(), "job 1") {
			t.Errorf("%s: err = %v, want one naming job 1", name, err)
		}
		if buf.Len() != 0 {
			t.Errorf("%s: wrote %q before failing", name, buf.String())
		}
	}
}

func TestReadCSVExample(t *testing.T) {
	f, err := os.Open("testdata/example.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := ReadCSV(f, "example")
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{Submit: 0, Duration: 2400 * time.Second, Slots: 4, Class: jobs.ClassCore, Team: "data", Template: "etl-nightly", Deadline: 4 * time.Hour},
		{Submit: 12500 * time.Millisecond, Duration: 900 * time.Second, Slots: 1, Class: jobs.ClassBurst, Team: "ml", Template: "train", Checkpointable: true},
		{Submit: time.Minute, Duration: 250 * time.Millisecond, Slots: 2, Class: jobs.ClassBurst, Team: "search, web", Template: "loadtest", Checkpointable: true},
		{Submit: time.Hour, Duration: 1800125 * time.Millisecond, Slots: 8, Class: jobs.ClassCore, Team: "ml", Template: "retrain-weekly", Checkpointable: true, Deadline: 12 * time.Hour},
	}
	if !reflect.DeepEqual(tr.Jobs, want) {
		t.Errorf("got %+v\nwant %+v", tr.Jobs, want)
	}
	if tr.Name != "example" || tr.Start.Location().String() != "Europe/Berlin" || !tr.Start.Equal(time.Date(2025, 3, 31, 22, 0, 0, 0, time.UTC)) {
		t.Errorf("name %q start %v", tr.Name, tr.Start)
	}
	if err := tr.Validate(); err != nil {
		t.Error(err)
	}
}

func TestReadCSVErrors(t *testing.T) {
	const ok = "1,2,1,core,t,x,false,\n"
	for _, c := range []struct {
		in           string
		line         int
		column, want string
	}{
		{"", 1, "", `line 1: no header: want "` + csvHeader + `"`},
		{"# only a comment\n", 2, "", "line 2: no header"},
		{"submit_s,duration_s\n", 1, "", `line 1: header is "submit_s,duration_s", want`},
		{header + ok + "1,0,1,core,t,x,false,\n", 3, "duration_s", "line 3: duration_s: must be > 0"},
		{header + "\n\n" + "1,-2,1,core,t,x,false,\n", 4, "duration_s", "line 4: duration_s: must be > 0"},
		{header + "-1,2,1,core,t,x,false,\n", 2, "submit_s", "line 2: submit_s: must be >= 0"},
		{header + "1s,2,1,core,t,x,false,\n", 2, "submit_s", `line 2: submit_s: "1s" is not a number of seconds`},
		{header + ",2,1,core,t,x,false,\n", 2, "submit_s", "line 2: submit_s: empty, want seconds"},
		{header + "1e12,2,1,core,t,x,false,\n", 2, "submit_s", "line 2: submit_s: out of range"},
		{header + "99999999999,2,1,core,t,x,false,\n", 2, "submit_s", "line 2: submit_s: out of range"},
		{header + "1,2,0,core,t,x,false,\n", 2, "slots", "line 2: slots: must be >= 1"},
		{header + "1,2,1.5,core,t,x,false,\n", 2, "slots", `line 2: slots: "1.5" is not a whole number`},
		{header + "1,2,99999999,core,t,x,false,\n", 2, "slots", "line 2: slots: 99999999 is more than 1048576"},
		{header + "1,2,1,gold,t,x,false,\n", 2, "class", `line 2: class: "gold" is not core or burst`},
		{header + "1,2,1,core,t,x,yes,\n", 2, "checkpointable", `line 2: checkpointable: "yes" is not true or false`},
		{header + "1,2,1,core,t,x,false,-5\n", 2, "deadline_s", "line 2: deadline_s: must be >= 0"},
		{header + "1,2,1,core,t,x,false\n", 2, "", "line 2: has 7 fields, want 8"},
		{header + ok + ok + "1,2,1,core,\"t,x,false,\n", 4, "", "line 4: field 5: quote not closed"},
		{header + "1,2,1,core,t\"t,x,false,\n", 2, "", "line 2: field 5: a quote inside an unquoted field"},
		{header + "1,2,1,core,\"t\"x,x,false,\n", 2, "", "line 2: field 5: text after the closing quote"},
		{"# start: yesterday\n" + header, 1, "start", `line 1: start: "yesterday" is not an RFC 3339 time`},
		{"# start: 2025-04-01T00:00:00Z Mars/Olympus\n" + header, 1, "start", `line 1: start: unknown time zone "Mars/Olympus"`},
		{header + ok + strings.Repeat("x", MaxLineBytes+10) + "\n", 3, "", "line 3: longer than 4096 bytes"},
		{header + ok + "1,2,1,core,t," + strings.Repeat("x", MaxLineBytes) + ",false,\n", 3, "", "line 3: longer than 4096 bytes"},
	} {
		_, err := ReadCSV(strings.NewReader(c.in), "bad")
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%.60q:\n got %v\nwant %s...", c.in, err, c.want)
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != c.line || pe.Column != c.column {
			t.Errorf("%.60q: got %#v, want line %d column %q", c.in, pe, c.line, c.column)
		}
	}
}

func TestReadCSVAccepts(t *testing.T) {
	in := "\xef\xbb\xbf" + "# a comment before the header\r\n" +
		strings.ReplaceAll(header, "\n", "\r\n") +
		"1e-05,2.0000000004,1,core,t,x,TRUE,\r\n" + // exponent; a tenth digit rounds
		"\r\n" +
		"# a comment between jobs\n" +
		"3,0.0000000015,1,burst,\"a \"\"b\"\"\",\"\",False,7\n" +
		"4,1,1,burst,t,x,false," // no final newline
	tr, err := ReadCSV(strings.NewReader(in), "ok")
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{Submit: 10 * time.Microsecond, Duration: 2 * time.Second, Slots: 1, Class: jobs.ClassCore, Team: "t", Template: "x", Checkpointable: true},
		{Submit: 3 * time.Second, Duration: 2 * time.Nanosecond, Slots: 1, Class: jobs.ClassBurst, Team: `a "b"`, Template: "", Deadline: 7 * time.Second},
		{Submit: 4 * time.Second, Duration: time.Second, Slots: 1, Class: jobs.ClassBurst, Team: "t", Template: "x"},
	}
	if !reflect.DeepEqual(tr.Jobs, want) {
		t.Errorf("got %+v\nwant %+v", tr.Jobs, want)
	}
}

func TestReadCSVSortsStably(t *testing.T) {
	in := header +
		"30,1,1,core,t,c,false,\n" +
		"10,1,1,core,t,a1,false,\n" +
		"20,1,1,core,t,b1,false,\n" +
		"10,1,1,core,t,a2,false,\n" +
		"20,1,1,core,t,b2,false,\n" +
		"0,1,1,core,t,z,false,\n" +
		"10,1,1,core,t,a3,false,\n"
	tr, err := ReadCSV(strings.NewReader(in), "s")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range tr.Jobs {
		got = append(got, fmt.Sprintf("%v:%s", j.Submit.Seconds(), j.Template))
	}
	want := "0:z 10:a1 10:a2 10:a3 20:b1 20:b2 30:c"
	if strings.Join(got, " ") != want {
		t.Errorf("got %s, want %s", strings.Join(got, " "), want)
	}
}

func TestParseSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0":            0,
		"7":            7 * time.Second,
		"0.001":        time.Millisecond,
		".5":           500 * time.Millisecond,
		"5.":           5 * time.Second,
		"1.000000001":  time.Second + 1,
		"1.0000000005": time.Second + 1, // half rounds up
		"1.0000000004": time.Second,
		"2592000.123":  30*24*time.Hour + 123*time.Millisecond,
		"4550879.0":    4550879 * time.Second,
		"1e-3":         time.Millisecond,
		"1.5E+03":      1500 * time.Second,
		"-2.5":         -2500 * time.Millisecond,
		"+3":           3 * time.Second,
		"3153600000":   MaxOffset,
	} {
		got, err := parseSeconds([]byte(in))
		if err != nil || got != want {
			t.Errorf("parseSeconds(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", ".", "1.2.3", "abc", "NaN", "inf", "3153600000.000000001", "1e300", " 1", "0x10"} {
		if got, err := parseSeconds([]byte(in)); err == nil {
			t.Errorf("parseSeconds(%q) = %v, want an error", in, got)
		}
	}
}

func TestAppendSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                       "0",
		time.Second:             "1",
		time.Millisecond:        "0.001",
		1500 * time.Millisecond: "1.5",
		time.Second + 1:         "1.000000001",
		MaxOffset:               "3153600000",
	} {
		if got := string(appendSeconds(nil, d)); got != want {
			t.Errorf("appendSeconds(%v) = %q, want %q", d, got, want)
		}
	}
}

// csvOfJobs writes n jobs cycling through a few teams and templates.
func csvOfJobs(t testing.TB, n int) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	teams := []string{"ads", "data", "ml"}
	for i := range n {
		fmt.Fprintf(&b, "%d.%03d,%d,%d,burst,%s,tmpl-%d,true,\n", i/10, i%1000, 1+i%900, 1+i%8, teams[i%3], i%5)
	}
	return b.Bytes()
}

func TestReadCSVInternsStrings(t *testing.T) {
	tr, err := ReadCSV(bytes.NewReader(csvOfJobs(t, 3000)), "i")
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]*byte{}
	for _, j := range tr.Jobs {
		for _, s := range []string{j.Team, j.Template} {
			p := unsafe.StringData(s)
			if q, ok := first[s]; !ok {
				first[s] = p
			} else if p != q {
				t.Fatalf("%q is held in more than one copy", s)
			}
		}
	}
	if len(first) != 8 {
		t.Errorf("%d distinct strings, want 3 teams + 5 templates", len(first))
	}
}

// TestReadCSVHoldsOnlyJobs checks that what a read trace keeps alive is its
// Jobs slice (sized close to the job count) and nothing of the input.
func TestReadCSVHoldsOnlyJobs(t *testing.T) {
	const n = 200_000
	in := csvOfJobs(t, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tr, err := ReadCSV(bytes.NewReader(in), "m")
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	jobsBytes := int64(cap(tr.Jobs)) * int64(unsafe.Sizeof(Job{}))
	if cap(tr.Jobs) > n*108/100 {
		t.Errorf("cap(Jobs) = %d for %d jobs: the size hint did not work", cap(tr.Jobs), n)
	}
	if held > jobsBytes+1<<20 {
		t.Errorf("the trace holds %d bytes, its Jobs slice %d", held, jobsBytes)
	}
	runtime.KeepAlive(in)
	runtime.KeepAlive(tr)
}

func TestJobsGrowerSizesFromInput(t *testing.T) {
	const n, lineBytes = 100_000, 40
	g := jobsGrower{total: n * lineBytes}
	var js []Job
	grown := 0
	for i := range n {
		before := cap(js)
		js = g.reserve(js, int64(i*lineBytes))
		js = append(js, Job{})
		if cap(js) != before {
			grown++
		}
	}
	// Append alone grows ~40 times to a capacity up to 25% too big.
	if cap(js) < n || cap(js) > n*102/100 {
		t.Errorf("cap %d for %d jobs", cap(js), n)
	}
	if grown > 30 {
		t.Errorf("grew %d times", grown)
	}

	unknown := jobsGrower{total: -1}
	js = make([]Job, 10)
	if got := unknown.reserve(js, 1000); cap(got) != cap(js) {
		t.Errorf("an input of unknown size changed the capacity to %d", cap(got))
	}
}
