package usage

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// Launch is an elastic worker the controller asked a provider for.
type Launch struct {
	ID    string
	Pool  string
	Slots int
	// At is when it was asked for: its billing starts no later.
	At time.Time
}

// recordLaunchesScript notes launches whose worker has not registered yet.
// A provider call that retried can return after its first instances have
// already registered; their lives began at registration, and a launch
// written now would never be consumed and be billed again as a failed boot.
// The heartbeat script consumes a launch when its worker registers.
// KEYS: launches. ARGV: workerKeyPrefix, then id, "startMs|pool|slots" pairs.
var recordLaunchesScript = redis.NewScript(`
local n = 0
for i = 2, #ARGV, 2 do
  if redis.call("HEXISTS", ARGV[1] .. ARGV[i], "life") == 0 then
    redis.call("HSET", KEYS[1], ARGV[i], ARGV[i + 1])
    n = n + 1
  end
end
return n
`)

// endLaunchScript closes the launch of a worker that never registered (its
// boot failed, or it was released first) as a life of its own: the
// provider billed it all the same. KEYS: launches, lives, livesEnd.
// ARGV: id, endMs. Returns 1 when a pending launch was closed.
var endLaunchScript = redis.NewScript(`
local launch = redis.call("HGET", KEYS[1], ARGV[1])
if not launch then return 0 end
redis.call("HDEL", KEYS[1], ARGV[1])
local start = string.match(launch, "^(%d+)|")
if not start then return 0 end
local life = launch .. "|" .. ARGV[1]
redis.call("ZADD", KEYS[2], "NX", start, life)
local e = ARGV[2]
if tonumber(e) < tonumber(start) then e = start end
redis.call("HSETNX", KEYS[3], life, e)
return 1
`)

// RecordLaunches notes launches, so that each worker's life starts at its
// launch when it registers. A launch whose worker has registered already is
// skipped: its life is open.
func (s *Store) RecordLaunches(ctx context.Context, ls []Launch) error {
	if len(ls) == 0 {
		return nil
	}
	ns := s.k.Namespace()
	args := make([]any, 0, 1+2*len(ls))
	args = append(args, ns.WorkerPrefix())
	for _, l := range ls {
		args = append(args, l.ID, fmt.Sprintf("%d|%s|%d", l.At.UnixMilli(), l.Pool, l.Slots))
	}
	return queues.Wrap("usage.RecordLaunches",
		recordLaunchesScript.Run(ctx, s.k.Redis(), []string{ns.Launches()}, args...).Err())
}

// PendingLaunches returns the launches whose worker has not registered yet.
func (s *Store) PendingLaunches(ctx context.Context) ([]Launch, error) {
	m, err := s.k.Redis().HGetAll(ctx, s.k.Namespace().Launches()).Result()
	if err != nil {
		return nil, queues.Wrap("usage.PendingLaunches", err)
	}
	out := make([]Launch, 0, len(m))
	for id, v := range m {
		if l, ok := queues.ParseLife(v + "|" + id); ok {
			out = append(out, Launch{ID: id, Pool: l.Pool, Slots: l.Slots, At: l.Start})
		}
	}
	return out, nil
}

// EndLaunch closes a launch whose worker never registered as a life that
// ended at end. It reports false when the launch was not pending (its
// worker registered, or it was closed already).
func (s *Store) EndLaunch(ctx context.Context, id string, end time.Time) (bool, error) {
	ns := s.k.Namespace()
	n, err := endLaunchScript.Run(ctx, s.k.Redis(), []string{ns.Launches(), ns.Lives(), ns.LivesEnd()},
		id, end.UnixMilli()).Int()
	return n == 1, queues.Wrap("usage.EndLaunch", err)
}
