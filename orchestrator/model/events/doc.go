// Package events owns the vocabulary of Ballast's event bus: the Event type
// every job and worker state change is described by, one typed payload per
// kind (the only place Data's keys are spelled), the NATS subject names (all
// built in Subjects), the wire encoding (AppendJSON, Decode) and the
// Publisher interface with Discard. It does no I/O; the bus itself —
// publishing on NATS, the JetStream stream and its readers — is
// control/eventbus.
//
// Events are a record of what happened, not the truth: the job record in
// Redis is. A lost event loses history, never a job.
package events
