// Package events owns Ballast's event bus: the Event type every job and worker
// state change is described by, the NATS subject names (all built in
// Subjects), publishing, the JetStream stream that keeps the history, and the
// readers used by the CLI and dashboard (Watch, History, Follow).
//
// Publishing is a core NATS publish carrying a Nats-Msg-Id header: the stream
// captures it and drops republished duplicates within its window, while the
// publisher (a worker in the middle of a job) never waits for a JetStream ack.
// Events are a record of what happened, not the truth: the job record in
// Redis is. A lost event loses history, never a job.
package events
