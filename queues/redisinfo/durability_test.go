package redisinfo_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ballastdev/ballast/internal/testenv"
	"github.com/ballastdev/ballast/queues"
	"github.com/ballastdev/ballast/queues/redisinfo"
)

func TestDurabilityOf(t *testing.T) {
	t.Parallel()
	safe := map[string]string{"appendonly": "yes", "appendfsync": "everysec", "save": "", "maxmemory-policy": "noeviction"}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range safe {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for _, c := range []struct {
		name     string
		settings map[string]string
		durable  bool
		reason   string
		problem  string // substring of a problem, "" for none
		note     string // substring of a note, "" for none
	}{
		{"aof", safe, true, "ok", "", ""},
		{"rdb only", map[string]string{"appendonly": "no", "save": "3600 1", "maxmemory-policy": "noeviction"}, true, "ok", "",
			`RDB snapshots only (save "3600 1")`},
		{"neither", map[string]string{"appendonly": "no", "save": "", "maxmemory-policy": "noeviction"}, false, "no_persistence",
			`appendonly no and save "": a restart loses accepted jobs; set appendonly yes`, ""},
		{"evicting", with("maxmemory-policy", "allkeys-lru"), false, "evicting", "maxmemory-policy allkeys-lru", ""},
		{"lax fsync", with("appendfsync", "no"), true, "ok", "", "appendfsync no"},
		{"policy unreadable", map[string]string{"appendonly": "yes", "save": ""}, false, "evicting", "maxmemory-policy not readable", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := redisinfo.DurabilityOf(c.settings)
			if d.Durable() != c.durable || d.Reason() != c.reason {
				t.Fatalf("durable %v reason %q, want %v %q (%+v)", d.Durable(), d.Reason(), c.durable, c.reason, d)
			}
			if (c.problem == "") != (len(d.Problems) == 0) || c.problem != "" && !strings.Contains(strings.Join(d.Problems, "|"), c.problem) {
				t.Errorf("problems %q, want one containing %q", d.Problems, c.problem)
			}
			if (c.note == "") != (len(d.Notes) == 0) || c.note != "" && !strings.Contains(strings.Join(d.Notes, "|"), c.note) {
				t.Errorf("notes %q, want one containing %q", d.Notes, c.note)
			}
		})
	}
}

// TestCheckDurabilityOnTestRedis: the shared test Redis runs with
// --save "" --appendonly no, so the check must say both that a restart
// loses jobs and how to fix it.
func TestCheckDurabilityOnTestRedis(t *testing.T) {
	t.Parallel()
	rdb, ns := testenv.Redis(t)
	d := redisinfo.New(queues.NewStore(rdb, queues.StoreOptions{Namespace: ns})).CheckDurability(context.Background())
	if !d.Known {
		t.Fatalf("CONFIG GET refused on the test Redis: %v", d.Notes)
	}
	if d.Settings["appendonly"] != "no" || d.Settings["save"] != "" {
		t.Skipf("the test Redis persists (appendonly %q, save %q); this test expects --save \"\" --appendonly no", d.Settings["appendonly"], d.Settings["save"])
	}
	if d.Durable() || d.Persisted {
		t.Fatalf("judged durable: %+v", d)
	}
	want := `appendonly no and save "": a restart loses accepted jobs; set appendonly yes (appendfsync everysec)`
	if len(d.Problems) == 0 || d.Problems[0] != want {
		t.Fatalf("problems %q, want first %q", d.Problems, want)
	}
	if p := d.Settings["maxmemory-policy"]; (p != "noeviction") != d.Evicting {
		t.Fatalf("maxmemory-policy %q but evicting %v", p, d.Evicting)
	}
}

// TestCheckDurabilityFollowsTheServer: on a private server, turning AOF on
// with CONFIG SET makes the check pass, and eviction makes it fail again.
func TestCheckDurabilityFollowsTheServer(t *testing.T) {
	t.Parallel()
	rdb := testenv.RedisServer(t)
	ctx := context.Background()
	s := redisinfo.New(queues.NewStore(rdb, queues.StoreOptions{Namespace: "durability"}))
	if d := s.CheckDurability(ctx); d.Durable() || d.Reason() != "no_persistence" {
		t.Fatalf("fresh server started without persistence: %+v", d)
	}
	if err := rdb.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	if d := s.CheckDurability(ctx); !d.Durable() || len(d.Problems) != 0 {
		t.Fatalf("after appendonly yes: %+v", d)
	}
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		t.Fatal(err)
	}
	if d := s.CheckDurability(ctx); d.Durable() || d.Reason() != "evicting" {
		t.Fatalf("after maxmemory-policy allkeys-lru: %+v", d)
	}
}

// TestCheckDurabilityWithoutConfig: a Redis that refuses CONFIG (renamed,
// as managed services do) gives an unknown verdict that says so, not an
// error that would stop the controller.
func TestCheckDurabilityWithoutConfig(t *testing.T) {
	t.Parallel()
	rdb := testenv.RedisServer(t, "--rename-command", "CONFIG", "")
	d := redisinfo.New(queues.NewStore(rdb, queues.StoreOptions{Namespace: "durability"})).CheckDurability(context.Background())
	if d.Known || d.Durable() || d.Reason() != "unknown" {
		t.Fatalf("CONFIG renamed away but judged known: %+v", d)
	}
	if len(d.Notes) != 1 || !strings.Contains(d.Notes[0], "CONFIG GET appendonly refused") {
		t.Fatalf("notes %q, want one saying CONFIG GET was refused", d.Notes)
	}
}

// TestCheckDurabilityUnreachable: a Redis that cannot be reached is not
// reported as refusing CONFIG, which would send the operator to the wrong
// fix.
func TestCheckDurabilityUnreachable(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	d := redisinfo.New(queues.NewStore(rdb, queues.StoreOptions{Namespace: "durability"})).CheckDurability(context.Background())
	if d.Known || len(d.Notes) != 1 || !strings.Contains(d.Notes[0], "CONFIG GET appendonly failed") {
		t.Fatalf("unreachable Redis: %+v, want one note saying CONFIG GET failed", d)
	}
}
