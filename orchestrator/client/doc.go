// Package client is the Go client for submitting jobs (Submit) and sweeps
// (SubmitSweep) to a running Ballast, over NATS (NewNATS) or HTTP
// (NewHTTP). Both speak the intake's wire format and return the intake's
// answers as *Error, usable with errors.Is and errors.As.
//
// Retries are safe: a submission or sweep without an idempotency key gets a
// random one before the first try, so a retry after a timeout or an
// "unavailable" answer returns the job or sweep the first try may have
// created instead of making a second one.
package client
