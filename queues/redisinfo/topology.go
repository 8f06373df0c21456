package redisinfo

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Topology is the Redis topology a store runs on, as the client sees it
// now: status shows it, so an operator can tell which servers hold the
// namespace and that a failover happened.
type Topology struct {
	// Mode is standalone, sentinel or cluster.
	Mode string `json:"mode"`
	// Masters are the addresses of the masters serving now: the server,
	// the master the Sentinels named, or every cluster master.
	Masters []string `json:"masters"`
	// HashTag is the tag every key of the namespace carries ("{NS}").
	HashTag string `json:"hash_tag"`
	// Slot and SlotMaster (cluster only) are the namespace's hash slot and
	// the master serving it: one namespace lives on one shard.
	Slot       int64  `json:"slot,omitempty"`
	SlotMaster string `json:"slot_master,omitempty"`
	// Error says why the masters could not be read, if they could not.
	Error string `json:"error,omitempty"`
}

// Topology reads the store's Redis topology. Errors are reported in the
// result, not returned: status must still show the rest.
func (s *Store) Topology(ctx context.Context) Topology {
	ns := s.k.Namespace()
	t := Topology{Mode: "standalone", HashTag: ns.HashTag()}
	switch c := s.k.Redis().(type) {
	case *redis.ClusterClient:
		t.Mode = "cluster"
		var mu sync.Mutex
		err := c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			t.Masters = append(t.Masters, node.Options().Addr)
			return nil
		})
		if err != nil {
			t.Error = err.Error()
		}
		slices.Sort(t.Masters)
		if t.Slot, err = c.ClusterKeySlot(ctx, ns.Outbox()).Result(); err != nil {
			t.Error = err.Error()
		}
		if node, err := c.MasterForKey(ctx, ns.Outbox()); err == nil {
			t.SlotMaster = node.Options().Addr
		}
	case *redis.Client:
		addr := c.Options().Addr
		// A Sentinel-backed client has no address of its own; the server
		// says where this connection landed.
		if addr == "FailoverClient" {
			t.Mode = "sentinel"
			addr = ""
			if info, err := c.ClientInfo(ctx).Result(); err == nil {
				addr = info.LAddr
			} else {
				t.Error = err.Error()
			}
		}
		if addr != "" {
			t.Masters = []string{strings.TrimSpace(addr)}
		}
	}
	return t
}
