// Package archtest holds the tests that keep the code's shape as
// designed while it moves (docs/layout.md):
//   - narrow stores: the job store (queues.Store) and the stores of one
//     concern under queues are reached through interfaces their users
//     declare, of at most 15 methods each, and a concrete Store appears
//     only where a store is built or split (concrete_store_test.go lists
//     where and why);
//   - typed events: an event's Data keys are spelled only in
//     orchestrator/model/events;
//   - layers: what each folder may import, no network I/O in the pure
//     models and the analysis, and no service that depends on the command
//     layer (layers_test.go);
//   - the layout page names every package folder (layout_doc_test.go).
//
// It has no code of its own.
package archtest
