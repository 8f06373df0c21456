package queues

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// SetUsagePage sets how many usage entries one read returns, so a test can
// cross page boundaries with a handful of records; the returned func
// restores it.
func SetUsagePage(n int64) func() {
	old := usagePage
	usagePage = n
	return func() { usagePage = old }
}

// LoadScripts loads the job scripts into rdb's script cache, so that a
// test that loses one reply loses the script's own, not a NOSCRIPT error
// that would make the client send the script again.
func LoadScripts(ctx context.Context, rdb redis.Scripter) error {
	for _, s := range []*redis.Script{submitScript, claimScript, finishScript, requeueScript, cancelScript, moveScript,
		memberClaimScript, abandonMemberScript, placeScript} {
		if err := s.Load(ctx, rdb).Err(); err != nil {
			return err
		}
	}
	return nil
}
