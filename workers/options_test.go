package workers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/registry"
	"github.com/ballastdev/ballast/workers"
	"github.com/ballastdev/ballast/workers/gpu"
)

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	valid := workers.Options{Slots: 2, Queues: []queues.Queue{queues.QueueCore, queues.QueueLoan},
		PollInterval: 5 * time.Millisecond, Heartbeat: time.Second, DrainTimeout: time.Minute}
	if err := valid.Validate(); err != nil {
		t.Fatalf("valid options rejected: %v", err)
	}
	if err := (workers.Options{}).WithDefaults().Validate(); err != nil {
		t.Fatalf("defaults rejected: %v", err)
	}
	// Self-fencing off takes any heartbeat, however long.
	if err := (workers.Options{Heartbeat: time.Hour, SelfFence: -1}).WithDefaults().Validate(); err != nil {
		t.Fatalf("a long heartbeat without self-fencing rejected: %v", err)
	}
	three := []gpu.Device{{Index: 0, UUID: "GPU-a"}, {Index: 1, UUID: "GPU-b"}, {Index: 2, UUID: "GPU-c"}}
	if o := (workers.Options{GPUs: three}).WithDefaults(); o.Slots != 3 || o.Validate() != nil {
		t.Fatalf("a GPU worker's slots default to %d (%v), want 3, one per GPU", o.Slots, o.Validate())
	}
	cases := []struct {
		name string
		mod  func(*workers.Options)
		want []string
	}{
		{"zero slots", func(o *workers.Options) { o.Slots = 0 }, []string{"slots"}},
		{"negative slots", func(o *workers.Options) { o.Slots = -1 }, []string{"slots"}},
		{"too many slots", func(o *workers.Options) { o.Slots = 5000 }, []string{"slots"}},
		{"unknown queue", func(o *workers.Options) { o.Queues = []queues.Queue{queues.QueueCore, "fast"} },
			[]string{`unknown queue "fast"`}},
		{"held queue", func(o *workers.Options) { o.Queues = []queues.Queue{queues.QueueCore, queues.QueueHeld} },
			[]string{"held is read by no worker"}},
		{"duplicated queue", func(o *workers.Options) {
			o.Queues = []queues.Queue{queues.QueueCore, queues.QueueLoan, queues.QueueCore}
		},
			[]string{`"core" is listed twice`}},
		// Validate only looks at whether Control is set; no connection needed.
		{"wildcard id with control", func(o *workers.Options) { o.Control = &nats.Conn{}; o.ID = "w>" },
			[]string{"id:", "wildcard"}},
		{"bad subject prefix with control", func(o *workers.Options) {
			o.Control = &nats.Conn{}
			o.Subjects = events.Subjects{Prefix: "a b"}
		}, []string{"subjects:"}},
		{"more slots than GPUs", func(o *workers.Options) {
			o.GPUs = []gpu.Device{{Index: 0, UUID: "GPU-a"}}
		}, []string{"slots: 2 is more than the worker's 1 GPUs; on a GPU worker a slot is a GPU"}},
		{"repeated GPU", func(o *workers.Options) {
			o.GPUs = []gpu.Device{{Index: 0, UUID: "GPU-a"}, {Index: 1, UUID: "GPU-a"}}
		}, []string{`repeated UUID "GPU-a"`}},
		{"self-fence share over the maximum", func(o *workers.Options) { o.SelfFence = 0.95 },
			[]string{"self_fence: 0.95 is above 0.9"}},
		{"self-fence within one heartbeat", func(o *workers.Options) { o.WorkerTTL, o.SelfFence = 2*time.Second, 0.5 },
			[]string{"self_fence: 0.5 of the worker TTL (2s) is 1s, not more than one heartbeat (1s)"}},
		{"negative worker TTL", func(o *workers.Options) { o.WorkerTTL = -time.Second }, []string{"worker_ttl"}},
		{"every problem at once", func(o *workers.Options) {
			o.Slots = 0
			o.Queues = []queues.Queue{"x", "x"}
			o.Heartbeat = 0
		}, []string{"slots", `unknown queue "x"`, `"x" is listed twice`, "heartbeat"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := valid
			c.mod(&o)
			err := o.Validate()
			if err == nil {
				t.Fatalf("%+v accepted", o)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := e.options()
	o.Queues = []queues.Queue{queues.QueueBurst, queues.QueueBurst}
	if w, err := workers.New(e.store, o); err == nil || w != nil || !strings.Contains(err.Error(), "listed twice") {
		t.Fatalf("New = %v, %v; want an error about the duplicated queue", w, err)
	}
}

func TestStopIsSafeBeforeStartAndTwice(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w, err := workers.New(e.store, e.options())
	if err != nil {
		t.Fatal(err)
	}
	w.Stop() // never started
	w.Stop()

	w2 := e.start(e.options())
	ws, err := registry.New(e.store).Workers(context.Background())
	if err != nil || len(ws) != 1 || ws[0].ID != w2.ID() || ws[0].Slots != 2 || ws[0].Pool != "fixed" {
		t.Fatalf("registry %+v, %v; want the started worker", ws, err)
	}
	w2.Stop()
	w2.Stop()
	if ws, err := registry.New(e.store).Workers(context.Background()); err != nil || len(ws) != 0 {
		t.Fatalf("registry %+v, %v; want it empty after Stop", ws, err)
	}
}

func TestStopAfterFailedStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w, err := workers.New(e.store, e.options())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // registration cannot reach Redis
	if err := w.Start(ctx); err == nil {
		t.Fatal("Start with a dead context succeeded")
	}
	done := make(chan any)
	go func() {
		defer func() { done <- recover() }()
		w.Stop()
	}()
	if p := <-done; p != nil {
		t.Fatalf("Stop after a failed Start panicked: %v", p)
	}
}
