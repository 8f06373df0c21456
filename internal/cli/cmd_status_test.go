package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// TestStatusShowsOverflowedJobs: a core job moved to the overflow queue is
// counted and listed; a core job still in core is not.
func TestStatusShowsOverflowedJobs(t *testing.T) {
	f := newFlowEnv(t, unreachableNATS)
	ctx := context.Background()
	spec := jobs.Spec{Template: "urgent", Command: []string{"true"}, Class: jobs.ClassCore,
		Timeout: jobs.Duration(time.Minute), Grace: jobs.Duration(time.Second)}
	over, err := f.store.Submit(ctx, spec, queues.QueueCore)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.store.Move(ctx, over.Job.ID, 1, queues.QueueOverflow, "rule 7"); n != 2 || err != nil {
		t.Fatalf("move: %d %v", n, err)
	}
	spec.Template = "patient"
	if _, err := f.store.Submit(ctx, spec, queues.QueueCore); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "status", "--config", f.path)
	if code != 0 {
		t.Fatalf("status: code %d: %s", code, errOut)
	}
	for _, want := range []string{"overflowed to on-demand (rule 7): 1", over.Job.ID, "urgent"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "patient") {
		t.Errorf("status lists a core job still in core as overflowed:\n%s", out)
	}
	// The test Redis runs with --save "" --appendonly no.
	if !strings.Contains(out, "redis: NOT durable") || !strings.Contains(out, `appendonly no and save ""`) {
		t.Errorf("status does not say the test Redis loses jobs on a restart:\n%s", out)
	}
	if want := "redis topology: standalone via " + f.cfg.Redis.Addr + "; masters now: " + f.cfg.Redis.Addr; !strings.Contains(out, want) {
		t.Errorf("status lacks %q:\n%s", want, out)
	}
	if want := "nats: " + f.cfg.NATS.URL + "; stream " + f.cfg.NATS.Stream + " with 1 replica(s)\nprovider: none"; !strings.Contains(out, want) {
		t.Errorf("status lacks %q:\n%s", want, out)
	}
	code, out, _ = run(t, "status", "--config", f.path, "-o", "json")
	if !strings.Contains(out, `"nats_stream_replicas": 1`) || !strings.Contains(out, `"provider": "none"`) {
		t.Errorf("status -o json lacks the NATS servers and the provider:\n%s", out)
	}
	if !strings.Contains(out, `"redis_topology": {`) || !strings.Contains(out, `"mode": "standalone"`) || !strings.Contains(out, `"hash_tag": "{`+f.ns+`}"`) {
		t.Errorf("status -o json lacks the Redis topology:\n%s", out)
	}
	if code != 0 || !strings.Contains(out, `"overflowed": [`) || !strings.Contains(out, `"queue": "overflow"`) {
		t.Errorf("status -o json lacks the overflowed list:\n%s", out)
	}
	if !strings.Contains(out, `"persisted": false`) {
		t.Errorf("status -o json lacks the Redis verdict:\n%s", out)
	}
}
