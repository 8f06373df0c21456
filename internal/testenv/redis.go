package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/queues"
)

// RedisAddr is the Redis server tests use: $BALLAST_TEST_REDIS or the local one.
func RedisAddr() string {
	if a := os.Getenv("BALLAST_TEST_REDIS"); a != "" {
		return a
	}
	return "127.0.0.1:6379"
}

// Redis returns a client for the test Redis and a namespace name unique to the
// test, so tests can run in parallel on one server. Keys under the namespace
// are deleted when the test ends. Without a Redis the test fails under CI and
// is skipped elsewhere.
func Redis(t testing.TB) (*redis.Client, string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: RedisAddr(), PoolSize: 64})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		Unavailable(t, "Redis at "+RedisAddr(), err)
	}
	ns := "bt" + RandomHex(5)
	t.Cleanup(func() {
		DeleteNamespace(c, ns)
		_ = c.Close()
	})
	return c, ns
}

// DeleteNamespace removes every key a test namespace created.
func DeleteNamespace(c redis.UniversalClient, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = queues.PurgeNamespace(ctx, c, ns)
}

// RandomHex returns 2n random hex digits.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Unavailable fails the test under CI (CI=true), where every dependency must be
// present, and skips it on a developer machine that lacks one.
func Unavailable(t testing.TB, what string, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is required under CI: %v", what, err)
	}
	t.Skipf("%s not available: %v", what, err)
}
