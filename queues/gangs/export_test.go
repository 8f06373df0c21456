package gangs

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// LoadScripts loads the gang scripts into rdb's script cache, so that a
// test that loses one reply loses the script's own, not a NOSCRIPT error
// that would make the client send the script again.
func LoadScripts(ctx context.Context, rdb redis.Scripter) error {
	for _, s := range []*redis.Script{memberClaimScript, abandonScript} {
		if err := s.Load(ctx, rdb).Err(); err != nil {
			return err
		}
	}
	return nil
}
