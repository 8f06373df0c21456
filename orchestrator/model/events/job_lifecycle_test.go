package events

import (
	"testing"
	"time"
)

func TestJobStartWire(t *testing.T) {
	s := JobStart{Pool: "fixed", ResumeFrom: "ck-3", Class: "burst", Wait: 2500 * time.Millisecond}
	sameWire(t, s.Data(), map[string]any{"pool": "fixed", "resume_from": "ck-3", "class": "burst", "wait_seconds": 2.5})
	e := stored(t, `{"id":"j1.2.job.running","type":"job.running","job_id":"j1","attempt":2,"time":"2026-12-01T09:00:00Z",`+
		`"data":{"class":"burst","pool":"fixed","resume_from":"ck-3","wait_seconds":2.5}}`)
	got, ok := ParseJobStart(e)
	s.HasWait = true
	sameValue(t, "ParseJobStart", got, s)
	if !ok {
		t.Fatal("a stored job.running event did not parse")
	}
	old := stored(t, `{"id":"x","type":"job.running","job_id":"j1","time":"2026-12-01T09:00:00Z","data":{"pool":"fixed"}}`)
	if got, _ := ParseJobStart(old); got.HasWait || got.Pool != "fixed" {
		t.Fatalf("an event without a wait parsed as %+v", got)
	}
	if _, ok := ParseJobStart(Event{Type: TypeJobQueued}); ok {
		t.Fatal("a job.queued event parsed as a start")
	}
}

func TestJobEndWire(t *testing.T) {
	code := 3
	qos := map[string]any{"cpu_seconds": 1.5, "oom_killed": false}
	x := JobEnd{Class: "core", ExitCode: &code, QoS: qos}
	sameWire(t, x.Data(), map[string]any{"class": "core", "exit_code": 3, "qos": qos})
	sameWire(t, JobEnd{Class: "core"}.Data(), map[string]any{"class": "core"})
	sameWire(t, JobEnd{Class: "core", ExitCode: &code, Unrecorded: "record gone"}.Data(),
		map[string]any{"class": "core", "exit_code": 3, "unrecorded": "record gone"})

	e := stored(t, `{"id":"j1.1.job.failed","type":"job.failed","job_id":"j1","attempt":1,"time":"2026-12-01T09:00:00Z",`+
		`"data":{"class":"core","exit_code":3,"qos":{"cpu_seconds":1.5,"oom_killed":false}}}`)
	got, ok := ParseJobEnd(e)
	if !ok {
		t.Fatal("a stored job.failed event did not parse")
	}
	sameValue(t, "ParseJobEnd", got, x)
	e = stored(t, `{"id":"a","type":"job.succeeded","job_id":"j1","time":"2026-12-01T09:00:00Z","data":{"class":"core","unrecorded":"gone"}}`)
	got, _ = ParseJobEnd(e)
	sameValue(t, "ParseJobEnd (unrecorded)", got, JobEnd{Class: "core", Unrecorded: "gone"})
	// Built in the same process (not decoded), the exit code is an int.
	got, _ = ParseJobEnd(Event{Type: TypeJobCancelled, Data: x.Data()})
	sameValue(t, "ParseJobEnd (built)", got, x)
	if _, ok := ParseJobEnd(Event{Type: TypeJobRunning}); ok {
		t.Fatal("a job.running event parsed as an end")
	}
}

func TestJobRequeueWire(t *testing.T) {
	plain := JobRequeue{ResumeFrom: "ck-1"}
	sameWire(t, plain.Data(), map[string]any{"resume_from": "ck-1"})
	pre := JobRequeue{Preempted: true, To: "burst", Checkpoint: "ck-2", Killed: true, QoS: map[string]any{"cpu_seconds": 2.0}}
	sameWire(t, pre.Data(), map[string]any{"to": "burst", "checkpoint": "ck-2", "killed": true, "qos": map[string]any{"cpu_seconds": 2.0}})

	e := stored(t, `{"id":"r","type":"job.requeued","job_id":"j1","time":"2026-12-01T09:00:00Z","data":{"resume_from":"ck-1"}}`)
	got, ok := ParseJobRequeue(e)
	if !ok {
		t.Fatal("a stored job.requeued event did not parse")
	}
	sameValue(t, "ParseJobRequeue", got, plain)
	e = stored(t, `{"id":"r","type":"job.requeued","job_id":"j1","time":"2026-12-01T09:00:00Z",`+
		`"data":{"to":"burst","checkpoint":"ck-2","killed":true,"qos":{"cpu_seconds":2}}}`)
	got, _ = ParseJobRequeue(e)
	sameValue(t, "ParseJobRequeue (preempted)", got, pre)
	if _, ok := ParseJobRequeue(Event{Type: TypeJobFailed}); ok {
		t.Fatal("a job.failed event parsed as a requeue")
	}
}

func TestCheckpointDataWire(t *testing.T) {
	sameWire(t, CheckpointData("ck-9"), map[string]any{"checkpoint": "ck-9"})
	e := stored(t, `{"id":"c","type":"job.checkpoint","job_id":"j1","time":"2026-12-01T09:00:00Z","data":{"checkpoint":"ck-9"}}`)
	if got := CheckpointToken(e); got != "ck-9" {
		t.Fatalf("CheckpointToken = %q; want ck-9", got)
	}
	if got := CheckpointToken(Event{Type: TypeJobQueued, Data: CheckpointData("x")}); got != "" {
		t.Fatalf("a job.queued event named checkpoint %q", got)
	}
}
