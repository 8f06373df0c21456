package workers

import (
	"context"
	"errors"
	"fmt"

	"github.com/hibiken/asynq"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/gangs"
)

// joinGang joins member d.Member of a gang for identity wid: the gang
// store's Member claims it and waits until every member is claimed, so
// that no member starts alone (see queues/gangs). It returns the running
// record and the member's place, or an error asynq acts on: revoked when
// the delivery is of no more use (the attempt moved on, or the gang did
// not assemble in time and this member moved it on), fenced (this
// identity is replaced first), or Redis trouble.
func (w *Worker) joinGang(ctx context.Context, d queues.Delivery, wid string) (jobs.Job, *gangEnv, error) {
	s, err := w.gangs.Member(d, gangs.Joiner{Worker: wid, Incarnation: w.inc, StartTimeout: w.opts.GangStartTimeout,
		Now: w.opts.Now, Draining: w.isDraining, Log: w.log}).Join(ctx)
	switch {
	case errors.Is(err, queues.ErrFenced):
		w.refence("claim")
		return jobs.Job{}, nil, err
	case errors.Is(err, gangs.ErrStale) || errors.Is(err, gangs.ErrTimeout):
		return jobs.Job{}, nil, fmt.Errorf("%w: %w", asynq.RevokeTask, err)
	case err != nil:
		return jobs.Job{}, nil, err
	}
	return s.Job, &gangEnv{member: s.Member, members: s.Members, coordinator: s.Coordinator}, nil
}
