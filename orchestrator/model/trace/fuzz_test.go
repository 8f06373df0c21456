package trace

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"testing"
)

// The trace readers take files from anywhere (public datasets, exports,
// hand edits). Their fuzz targets check: no input panics; a refused one is
// a *ParseError naming its line; an accepted trace is valid and survives a
// round trip through the documented CSV format unchanged.

func addFileSeed(f *testing.F, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
}

func FuzzReadCSV(f *testing.F) {
	addFileSeed(f, "testdata/example.csv")
	for _, seed := range []string{
		"submit_s,duration_s,slots,class,team,template,checkpointable,deadline_s\n0,1.5,1,burst,t,x,true,0\n",
		"# start: 2025-04-01T00:00:00Z\nsubmit_s,duration_s,slots,class,team,template,checkpointable,deadline_s\n10,60,2,core,a,b,false,120\n5,1,1,burst,a,b,false,0\n",
		"submit_s,duration_s,slots,class,team,template,checkpointable,deadline_s,replicas,requires\n0,1,2,burst,t,x,true,,4,gpu_model=A10;zone=a\n1,1,1,core,t,x,false,,,\n",
		"submit_s,duration_s,slots,class,team,template,checkpointable,deadline_s,requires\n0,1,1,core,t,x,false,,\"k=v,w\"\n",
		"submit_s,duration_s\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadCSV(bytes.NewReader(data), "fuzz")
		checkRead(t, tr, err)
	})
}

func FuzzReadAlibabaGPU2023(f *testing.F) {
	addFileSeed(f, "testdata/openb_pod_list_small.csv")
	f.Add([]byte("name,cpu_milli,num_gpu,gpu_milli,qos,creation_time,deletion_time,scheduled_time\np,1000,1,500,LS,0,100,10\n"))
	f.Add([]byte("name,cpu_milli,num_gpu,gpu_milli,qos,creation_time,deletion_time,scheduled_time\np,1000,0,0,BE,5,,\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, cpu := range []bool{false, true} {
			tr, _, err := ReadAlibabaGPU2023(bytes.NewReader(data), AlibabaGPUOptions{CountCPUPods: cpu})
			checkRead(t, tr, err)
		}
	})
}

func FuzzReadAlibabaSpot2026(f *testing.F) {
	addFileSeed(f, "testdata/alibaba_spot_2026_small.csv")
	f.Add([]byte("job_name,organization,gpu_model,cpu_request,gpu_request,worker_num,submit_time,duration,job_type\nj,Org A,A10,8,2,4,0.5,60,Spot\n"))
	f.Add([]byte("job_type,duration,submit_time,worker_num,gpu_request,cpu_request,gpu_model,organization,job_name\nHP,1,0,1,0,3.5,,,j\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, o := range []AlibabaSpotOptions{{}, {CountCPUJobs: true, SpotRestarts: true}} {
			tr, _, err := ReadAlibabaSpot2026(bytes.NewReader(data), o)
			checkRead(t, tr, err)
		}
	})
}

func FuzzReadPAI2020(f *testing.F) {
	addFileSeed(f, "testdata/pai_job_table_small.csv")
	f.Add([]byte("j,t,u,Terminated,100.0,160.0\nj2,t,u,Failed,50,49\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, _, err := ReadPAI2020(bytes.NewReader(data), PAIOptions{})
		checkRead(t, tr, err)
	})
}

// checkRead holds a reader's result to the properties above.
func checkRead(t *testing.T, tr Trace, err error) {
	t.Helper()
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line < 1 || pe.Err == nil {
			t.Fatalf("error %v (%T) is not a *ParseError naming a line", err, err)
		}
		return
	}
	if err := tr.Validate(); err != nil {
		t.Fatalf("an accepted trace is invalid: %v", err)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, tr); err != nil {
		t.Fatalf("an accepted trace does not write: %v", err)
	}
	back, err := ReadCSV(bytes.NewReader(buf.Bytes()), tr.Name)
	if err != nil {
		t.Fatalf("the trace written back is refused: %v\n%s", err, buf.Bytes())
	}
	if len(back.Jobs) != len(tr.Jobs) || (len(tr.Jobs) > 0 && !reflect.DeepEqual(back.Jobs, tr.Jobs)) ||
		!back.Start.Equal(tr.Start) {
		t.Fatalf("the trace changed in a CSV round trip:\n%+v\n%+v", tr, back)
	}
}
