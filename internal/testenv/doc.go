// Package testenv gives tests real dependencies, isolated per test: a Redis
// namespace of their own on the local server and an embedded NATS server with
// JetStream on a random port. Nothing here is a mock.
package testenv
