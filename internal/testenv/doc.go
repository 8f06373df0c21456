// Package testenv gives tests real dependencies, isolated per test: a Redis
// namespace of their own on the local server and an embedded NATS server with
// JetStream on a random port; for topology tests, a Redis Cluster of three
// masters and three replicas, and a master, replica and three Sentinels,
// all redis-server processes on loopback ports. Nothing here is a mock.
package testenv
