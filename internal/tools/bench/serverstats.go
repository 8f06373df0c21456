package bench

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Usage is what a phase cost beyond its round trips: every command Redis
// ran (those inside scripts too, by name, from INFO commandstats), the
// Redis server's CPU (INFO cpu) and this process's CPU (getrusage). Redis's
// figures are the whole server's: on a Redis that others use at the same
// time they include their work, so measure on one of your own (--redis).
type Usage struct {
	Commands map[string]int64
	// ScriptTime is the time Redis spent running scripts, their commands
	// included: set against RedisCPU it says how much of Redis's work is
	// the scripts and how much is serving round trips.
	ScriptTime time.Duration
	RedisCPU   time.Duration
	ClientCPU  time.Duration
}

// Sample reads the counters a phase's usage is the difference of.
func Sample(ctx context.Context, rdb redis.UniversalClient) Usage {
	u := Usage{Commands: map[string]int64{}, ClientCPU: processCPU()}
	if info, err := rdb.Info(ctx, "commandstats").Result(); err == nil {
		for _, line := range strings.Split(info, "\n") {
			name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || !strings.HasPrefix(name, "cmdstat_") {
				continue
			}
			cmd := strings.TrimPrefix(name, "cmdstat_")
			for _, kv := range strings.Split(rest, ",") {
				if v, ok := strings.CutPrefix(kv, "calls="); ok {
					n, _ := strconv.ParseInt(v, 10, 64)
					u.Commands[cmd] = n
				}
				if v, ok := strings.CutPrefix(kv, "usec="); ok && (cmd == "evalsha" || cmd == "eval") {
					n, _ := strconv.ParseInt(v, 10, 64)
					u.ScriptTime += time.Duration(n) * time.Microsecond
				}
			}
		}
	}
	if info, err := rdb.Info(ctx, "cpu").Result(); err == nil {
		var secs float64
		for _, line := range strings.Split(info, "\n") {
			name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if ok && (name == "used_cpu_sys" || name == "used_cpu_user") {
				f, _ := strconv.ParseFloat(v, 64)
				secs += f
			}
		}
		u.RedisCPU = time.Duration(secs * float64(time.Second))
	}
	return u
}

// add sums v into u.
func (u *Usage) add(v Usage) {
	if len(v.Commands) > 0 && u.Commands == nil {
		u.Commands = map[string]int64{}
	}
	for k, n := range v.Commands {
		u.Commands[k] += n
	}
	u.ScriptTime += v.ScriptTime
	u.RedisCPU += v.RedisCPU
	u.ClientCPU += v.ClientCPU
}

// Minus is the usage between before and u. The counters of this phase's
// reads of INFO itself are left out.
func (u Usage) Minus(before Usage) Usage {
	d := Usage{Commands: map[string]int64{}, ScriptTime: u.ScriptTime - before.ScriptTime,
		RedisCPU: u.RedisCPU - before.RedisCPU, ClientCPU: u.ClientCPU - before.ClientCPU}
	for k, v := range u.Commands {
		if n := v - before.Commands[k]; n > 0 && k != "info" {
			d.Commands[k] = n
		}
	}
	return d
}

// total is every command Redis ran.
func (u Usage) total() int64 {
	var n int64
	for _, v := range u.Commands {
		n += v
	}
	return n
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
