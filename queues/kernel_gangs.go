package queues

import "github.com/ballastdev/ballast/orchestrator/model/jobs"

// What the gang store (queues/gangs) shares with the kernel beyond
// Kernel. The kernel's own scripts that end, requeue or recover an attempt
// must fence a gang on membership in the same script that changes the job
// record, so the Lua helpers for that stay here and the gang store builds
// its scripts on the same text; a claim returns the record, which only the
// kernel knows how to decode.

// GangLua defines gangSize, gangMember, gangWorkers and gangUnlist (see
// gangLua) for a script of the gang store.
const GangLua = gangLua

// ClaimFenceLua defines claimFenced (see claimFenceLua) for a script of
// the gang store that gives a member to a worker.
const ClaimFenceLua = claimFenceLua

// DecodeRecord turns a job hash, as HGETALL reads it, into a Job.
func DecodeRecord(id string, h map[string]string) (jobs.Job, error) { return decodeRecord(id, h) }

// PlacedWorkers reads a record's "placed" field: the workers a gang's
// members were placed on for attempt, or nil when it names another
// attempt.
func PlacedWorkers(placed string, attempt int) []string { return decodePlaced(placed, attempt) }
