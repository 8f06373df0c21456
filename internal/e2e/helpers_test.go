package e2e

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/control/eventbus"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

// plane is a control plane assembled like internal/cli's startControlPlane:
// a Submitter behind the NATS intake, and the controller loop.
type plane struct {
	rdb   redis.UniversalClient
	ns    string
	srv   *server.Server
	nc    *nats.Conn
	subj  events.Subjects
	store *queues.Store
	pub   events.Publisher
	sub   *controller.Submitter
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newPlane starts the intake and a controller (unless ctlOpts is nil) on a
// fresh Redis namespace and an embedded NATS server.
func newPlane(t *testing.T, cat *jobs.Catalog, ctlOpts *controller.Options) *plane {
	t.Helper()
	rdb, ns := testenv.Redis(t)
	return newPlaneOn(t, rdb, ns, cat, ctlOpts)
}

// newPlaneOn is newPlane on a Redis of the caller's (a cluster, Sentinel)
// and namespace.
func newPlaneOn(t *testing.T, rdb redis.UniversalClient, ns string, cat *jobs.Catalog, ctlOpts *controller.Options) *plane {
	t.Helper()
	srv := testenv.NATS(t)
	nc := testenv.NATSConn(t, srv)
	p := &plane{rdb: rdb, ns: ns, srv: srv, nc: nc, subj: events.Subjects{Prefix: ns}}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := eventbus.EnsureStream(ctx, js, "E"+ns, p.subj, time.Hour); err != nil {
		t.Fatalf("EnsureStream: %v", err)
	}
	p.store = queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})
	p.pub = eventbus.NewNATSPublisher(nc, p.subj)
	log := quietLogger()
	p.sub = &controller.Submitter{Catalog: cat, Store: p.store, Router: controller.Router{}, Events: p.pub, Logger: log}

	if ctlOpts != nil {
		o := *ctlOpts
		o.Events = p.pub
		o.Logger = log
		ctl, err := controller.New(p.store, o)
		if err != nil {
			t.Fatalf("controller.New: %v", err)
		}
		if err := ctl.Start(context.Background()); err != nil {
			t.Fatalf("controller.Start: %v", err)
		}
		t.Cleanup(ctl.Stop)
	}
	in, err := intake.NewNATSServer(nc, p.sub, intake.NATSOptions{Subjects: p.subj, Logger: log})
	if err != nil {
		t.Fatalf("intake.NewNATSServer: %v", err)
	}
	if err := in.Start(context.Background()); err != nil {
		t.Fatalf("intake.Start: %v", err)
	}
	t.Cleanup(func() {
		stopped := make(chan struct{})
		go func() { in.Stop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(20 * time.Second):
			t.Errorf("the intake did not stop within 20s (a submission goroutine is stuck)")
		}
	})
	return p
}

// conn opens a NATS connection of its own to the plane's server.
func (p *plane) conn(t *testing.T) *nats.Conn {
	t.Helper()
	return testenv.NATSConn(t, p.srv)
}

// getJob reads a job, failing the test on error.
func (p *plane) getJob(t *testing.T, id string) jobs.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	j, err := p.store.Get(ctx, id)
	if err != nil {
		t.Fatalf("store.Get %s: %v", id, err)
	}
	return j
}
