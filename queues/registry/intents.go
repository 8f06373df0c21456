package registry

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// Worker intents are control requests for a whole worker (drain, spot
// notice), recorded on its registry entry. The NATS control message that
// follows is only a wake-up: the worker acts on what its heartbeat reads
// here, so a forged or replayed message changes nothing, and a lost one is
// made up at the next beat. An intent dies with the registry entry: at
// deregistration, recovery, or a new incarnation taking the ID over.

// ErrUnknownWorker is returned for an intent addressed to a worker that is
// not registered (never was, stopped, or was declared dead).
var ErrUnknownWorker = errors.New("worker is not registered")

// ErrNotSpot is returned for a spot notice addressed to a worker whose pool
// is not a spot pool: nothing reclaims fixed or on-demand capacity.
var ErrNotSpot = errors.New("worker is not in a spot pool")

// workerIntentScript records an intent on a registered worker.
// KEYS: worker. ARGV: kind ("drain" | "spot"), value (spot: deadline ms),
// the drain field, the spot field (queues.IntentDrainField,
// IntentSpotField).
// A second spot notice keeps the earlier deadline: the machine goes at the
// first one. Returns "ok" | "unknown" | "not_spot".
var workerIntentScript = redis.NewScript(`
if redis.call("HEXISTS", KEYS[1], "info") == 0 then return "unknown" end
if ARGV[1] == "drain" then
  redis.call("HSET", KEYS[1], ARGV[3], "1")
  return "ok"
end
if redis.call("HGET", KEYS[1], "spot_pool") ~= "1" then return "not_spot" end
local cur = tonumber(redis.call("HGET", KEYS[1], ARGV[4]))
if not cur or tonumber(ARGV[2]) < cur then redis.call("HSET", KEYS[1], ARGV[4], ARGV[2]) end
return "ok"
`)

// RequestDrain records that worker id must take no more work; its running
// jobs finish where they are. Wake the worker afterwards (NotifyControl).
func (s *Store) RequestDrain(ctx context.Context, id string) error {
	return s.workerIntent(ctx, "registry.RequestDrain", id, "drain", "1")
}

// RequestSpotNotice records that the provider takes spot worker id's
// machine at deadline: the worker checkpoints and requeues every job before
// then and exits. Refused with ErrNotSpot for a worker of another pool kind.
func (s *Store) RequestSpotNotice(ctx context.Context, id string, deadline time.Time) error {
	return s.workerIntent(ctx, "registry.RequestSpotNotice", id, "spot", strconv.FormatInt(deadline.UnixMilli(), 10))
}

func (s *Store) workerIntent(ctx context.Context, op, id, kind, value string) error {
	v, err := workerIntentScript.Run(ctx, s.k.Redis(), []string{s.k.Namespace().Worker(id)}, kind, value,
		queues.IntentDrainField, queues.IntentSpotField).Text()
	if err != nil {
		return queues.Wrap(op, err)
	}
	switch v {
	case "unknown":
		return fmt.Errorf("%s %q: %w (see ballast status for the live workers)", op, id, ErrUnknownWorker)
	case "not_spot":
		return fmt.Errorf("%s %q: %w; only spot workers can be reclaimed", op, id, ErrNotSpot)
	}
	return nil
}
