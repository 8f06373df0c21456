// Package intake is the ad hoc way in for jobs: NATS request-reply on
// PREFIX.jobs.submit (NATSServer) and HTTP POST /api/v1/jobs (HTTPHandler).
// Sweeps come in the same ways, on PREFIX.sweeps.submit (NATSOptions.Sweeps)
// and POST /api/v1/sweeps (SweepHTTPHandler).
//
// It owns the transport only: size limits, strict decoding, timeouts,
// bounded concurrency, authentication, and the wire format of receipts and
// errors (Receipt, SweepReceipt, ErrorBody). Validation against templates
// and durable enqueueing live behind the Submitter and SweepSubmitter
// interfaces, implemented by the controller (controller.Submitter and
// controller.Sweeps). The client package speaks
// this wire format.
package intake
