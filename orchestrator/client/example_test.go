package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/ballastdev/ballast/orchestrator/client"
	"github.com/ballastdev/ballast/orchestrator/control/intake"
	"github.com/ballastdev/ballast/orchestrator/model/events"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// exampleStore stands in for the controller's job store.
type exampleStore struct{}

func (exampleStore) Submit(_ context.Context, s jobs.Submission) (intake.Receipt, error) {
	if s.Template != "train" {
		return intake.Receipt{}, &jobs.ValidationError{Problems: []*jobs.FieldError{{Field: "template", Message: fmt.Sprintf("unknown template %q", s.Template)}}}
	}
	return intake.Receipt{JobID: "0195f0c2a1b2", Attempt: 1, State: jobs.StateQueued, Queue: "burst"}, nil
}

func Example() {
	// A NATS server and an intake, as `ballast dev` would run them.
	ns, _ := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true})
	go ns.Start()
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
	if !ns.ReadyForConnections(10 * time.Second) {
		fmt.Println("NATS did not start")
		return
	}
	srvConn, _ := nats.Connect(ns.ClientURL())
	defer srvConn.Close()
	in, _ := intake.NewNATSServer(srvConn, exampleStore{}, intake.NATSOptions{})
	if err := in.Start(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	defer in.Stop()

	// The client side.
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	c := client.NewNATS(nc, events.Subjects{})
	ctx := context.Background()

	r, err := c.Submit(ctx, jobs.Submission{
		Template:       "train",
		Params:         map[string]json.RawMessage{"epochs": json.RawMessage(`10`)},
		IdempotencyKey: "nightly-2025-03-01",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.JobID, r.State, r.Queue)

	_, err = c.Submit(ctx, jobs.Submission{Template: "trian"})
	var invalid *jobs.ValidationError
	if errors.As(err, &invalid) {
		for _, p := range invalid.Problems {
			fmt.Println(p.Field+":", p.Message)
		}
	}
	// Output:
	// 0195f0c2a1b2 queued burst
	// template: unknown template "trian"
}
