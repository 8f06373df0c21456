// Package eventbus carries the events of package events over NATS: the
// publisher every process uses (NATSPublisher), the JetStream stream that
// keeps the history (EnsureStream), and the readers the CLI, the dashboard
// and the controller's recovery use (Watch, History, Follow, Replay,
// OnJobChange, OnJobEnd).
//
// Publishing is a core NATS publish carrying a Nats-Msg-Id header: the
// stream captures it and drops republished duplicates within its window,
// while the publisher (a worker in the middle of a job) never waits for a
// JetStream ack. Every reader skips what does not decode, since any process
// with the subject's permission may publish; the Redis record decides.
package eventbus
