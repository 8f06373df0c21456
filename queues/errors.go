package queues

import (
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/orchestrator/model/jobs"
)

// wrap tags an error from Redis with the operation and, when Redis could not be
// reached or cannot serve writes, with jobs.ErrUnavailable so callers know a
// retry (with the same idempotency key) is the fix.
func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var nr *notReplicatedError
	var sm *slotMovedError
	if errors.As(err, &nr) || errors.As(err, &sm) {
		return fmt.Errorf("%s: %w: %v", op, jobs.ErrUnavailable, err)
	}
	if unavailable(err) {
		return fmt.Errorf("%s: %w (is Redis up and reachable? %v)", op, jobs.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

func unavailable(err error) bool {
	var re redis.Error
	if errors.As(err, &re) && !errors.Is(err, redis.Nil) {
		msg := re.Error()
		for _, p := range []string{"LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "BUSY"} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return false // a reply from a healthy server: a bug, not an outage
	}
	return !errors.Is(err, redis.Nil)
}
