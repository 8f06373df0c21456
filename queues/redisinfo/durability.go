package redisinfo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// durabilitySettings are the Redis settings that decide whether accepted
// work survives a restart (appendonly, appendfsync, save) and whether Redis
// may drop it under memory pressure (maxmemory-policy).
var durabilitySettings = []string{"appendonly", "appendfsync", "save", "maxmemory-policy"}

// Durability is what Redis's own settings say about keeping accepted jobs:
// a job record or an outbox entry that Redis forgets is a job nobody runs,
// and no Ballast process can notice it from the records alone.
type Durability struct {
	// Known is false when CONFIG GET was refused (a managed Redis that
	// renames the command, an ACL that denies it): nothing below is known.
	Known bool `json:"known"`
	// Persisted is true when AOF or RDB snapshots are on, so a restart
	// reloads the data (RDB loses what came after the last snapshot).
	Persisted bool `json:"persisted"`
	// Evicting is true when maxmemory-policy lets Redis drop keys.
	Evicting bool `json:"evicting"`
	// Problems name each setting that loses accepted work and its fix.
	Problems []string `json:"problems,omitempty"`
	// Notes are weaker warnings: RDB only, a lax appendfsync, a refused
	// CONFIG.
	Notes []string `json:"notes,omitempty"`
	// Settings are the values read, for status output.
	Settings map[string]string `json:"settings,omitempty"`
}

// Durable reports whether the settings are known to keep accepted jobs
// across a restart and under memory pressure.
func (d Durability) Durable() bool { return d.Known && d.Persisted && !d.Evicting }

// Reason is a short label for the verdict, the reason label of the
// durability metric: "ok", "unknown", "no_persistence", "evicting" or
// "no_persistence,evicting".
func (d Durability) Reason() string {
	if !d.Known {
		return "unknown"
	}
	var r []string
	if !d.Persisted {
		r = append(r, "no_persistence")
	}
	if d.Evicting {
		r = append(r, "evicting")
	}
	if len(r) == 0 {
		return "ok"
	}
	return strings.Join(r, ",")
}

// DurabilityOf judges Redis settings as CONFIG GET returns them. It reads no
// clock and does no I/O, so every combination can be tested directly. A
// setting absent from the map is reported as unknown, not assumed safe.
func DurabilityOf(settings map[string]string) Durability {
	d := Durability{Known: true, Settings: settings}
	aof, hasAOF := settings["appendonly"]
	save, hasSave := settings["save"]
	save = strings.TrimSpace(save)
	switch {
	case aof == "yes":
		d.Persisted = true
		if fsync := settings["appendfsync"]; fsync == "no" {
			d.Notes = append(d.Notes, "appendfsync no: the OS decides when the AOF reaches disk, so a host crash can lose recent jobs; set appendfsync everysec")
		}
	case hasSave && save != "":
		d.Persisted = true
		d.Notes = append(d.Notes, fmt.Sprintf("RDB snapshots only (save %q): a restart loses jobs accepted since the last snapshot; set appendonly yes (appendfsync everysec)", save))
	case !hasAOF || !hasSave:
		d.Problems = append(d.Problems, "appendonly or save not readable: cannot tell whether a restart keeps accepted jobs; set appendonly yes (appendfsync everysec)")
	default:
		d.Problems = append(d.Problems, fmt.Sprintf("appendonly %s and save %q: a restart loses accepted jobs; set appendonly yes (appendfsync everysec)", aof, save))
	}
	policy, hasPolicy := settings["maxmemory-policy"]
	switch {
	case !hasPolicy:
		d.Evicting = true
		d.Problems = append(d.Problems, "maxmemory-policy not readable: Redis may evict job records; set maxmemory-policy noeviction")
	case policy != "noeviction":
		d.Evicting = true
		d.Problems = append(d.Problems, fmt.Sprintf("maxmemory-policy %s: Redis may evict job records under memory pressure, losing accepted jobs; set maxmemory-policy noeviction", policy))
	}
	return d
}

// CheckDurability reads the durability settings of the Redis the store
// uses and judges them (DurabilityOf). A refused or failed CONFIG GET is
// not an error: managed services often deny it, and Ballast runs on
// regardless; the result is then not Known and its note says which.
func (s *Store) CheckDurability(ctx context.Context) Durability {
	rdb := s.k.Redis()
	settings := map[string]string{}
	for _, name := range durabilitySettings {
		// One GET per setting: a pattern would also match unrelated
		// settings, and some proxies refuse several names in one call.
		v, err := rdb.ConfigGet(ctx, name).Result()
		var refused redis.Error
		switch {
		case errors.As(err, &refused):
			return Durability{Notes: []string{fmt.Sprintf("CONFIG GET %s refused (%v): cannot verify that Redis keeps accepted jobs; check appendonly yes and maxmemory-policy noeviction with your provider", name, err)}}
		case err != nil:
			return Durability{Notes: []string{fmt.Sprintf("CONFIG GET %s failed (%v): cannot verify that Redis keeps accepted jobs", name, err)}}
		}
		if val, ok := v[name]; ok {
			settings[name] = val
		}
	}
	return DurabilityOf(settings)
}
