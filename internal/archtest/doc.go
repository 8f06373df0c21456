// Package archtest holds the tests that keep the code's shape as
// designed while it moves: the job store is reached through the narrow
// interfaces its users declare, and the concrete queues.Store appears
// only where the store is built or split (see concrete_store_test.go for
// the list and the reasons). It has no code of its own.
package archtest
