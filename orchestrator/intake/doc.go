// Package intake is the ad hoc way in for jobs: NATS request-reply on
// PREFIX.jobs.submit (NATSServer) and HTTP POST /api/v1/jobs (HTTPHandler).
//
// It owns the transport only: size limits, strict decoding, timeouts,
// bounded concurrency, authentication, and the wire format of receipts and
// errors (Receipt, ErrorBody). Validation against templates and durable
// enqueueing live behind the Submitter interface, implemented with the job
// store. The client package speaks this wire format.
package intake
