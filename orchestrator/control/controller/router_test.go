package controller_test

import (
	"testing"

	"github.com/ballastdev/ballast/orchestrator/control/controller"
	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
)

func TestRouterPlacesWorkByClassAndSpotEligibility(t *testing.T) {
	spot := jobs.Spec{Class: jobs.ClassBurst, Checkpointable: true, Retryable: true}
	noCkpt := jobs.Spec{Class: jobs.ClassBurst, Retryable: true}
	noRetry := jobs.Spec{Class: jobs.ClassBurst, Checkpointable: true}
	core := jobs.Spec{Class: jobs.ClassCore, Checkpointable: true, Retryable: true}
	managed := controller.Router{ElasticManaged: true}
	for _, c := range []struct {
		name string
		r    controller.Router
		spec jobs.Spec
		want queues.Queue
	}{
		{"core always core", managed, core, queues.QueueCore},
		{"core without elastic", controller.Router{}, core, queues.QueueCore},
		{"spot-safe burst", managed, spot, queues.QueueBurst},
		{"burst that cannot checkpoint", managed, noCkpt, queues.QueueOnDemand},
		{"burst that cannot retry", managed, noRetry, queues.QueueOnDemand},
		{"burst without elastic capacity is lent", controller.Router{}, spot, queues.QueueLoan},
	} {
		if got := c.r.Route(c.spec); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if got := controller.ElasticQueue(spot, 2, 3); got != queues.QueueBurst {
		t.Errorf("under the spot budget: %s", got)
	}
	if got := controller.ElasticQueue(spot, 3, 3); got != queues.QueueOnDemand {
		t.Errorf("spot budget spent: %s, want ondemand", got)
	}
}
