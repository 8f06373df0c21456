package insight

import (
	"net/url"
	"strings"
)

// Engines names the message bus and the elastic capacity provider a
// controller runs with, as its config gives them (Redis, whose masters
// move on a failover, is read live: redisinfo.Topology).
type Engines struct {
	// NATS lists the servers dialled, scheme and host:port only, so no
	// credential written into a URL is shown.
	NATS []string `json:"nats_servers"`
	// Stream is the event stream and StreamReplicas its replica count.
	Stream         string `json:"nats_stream"`
	StreamReplicas int    `json:"nats_stream_replicas"`
	// Provider is the elastic capacity provider in use: none, local,
	// exec or kubernetes.
	Provider string `json:"provider"`
}

// EnginesOf is the Engines of a comma-separated NATS URL list, the event
// stream and its replicas, and the provider kind in force (the caller
// reads them from its config; the --provider flag may override it).
// Plain values keep this package free of the command layer's config.
func EnginesOf(natsURLs, stream string, replicas int, provider string) Engines {
	e := Engines{Stream: stream, StreamReplicas: max(replicas, 1), Provider: provider, NATS: []string{}}
	if e.Provider == "" {
		e.Provider = "none"
	}
	for _, raw := range strings.Split(natsURLs, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			raw = u.Scheme + "://" + u.Host
		} else {
			raw = "(unreadable URL)"
		}
		e.NATS = append(e.NATS, raw)
	}
	return e
}

// engines is the Source's Engines, with empty lists as [] for JSON.
func (s Source) engines() Engines {
	e := s.Engines
	if e.NATS == nil {
		e.NATS = []string{}
	}
	if e.Provider == "" {
		e.Provider = "none"
	}
	return e
}
