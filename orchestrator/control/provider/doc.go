// Package provider starts and releases Ballast's elastic workers. The policy
// decides (ScaleUp, Drain, Release); the controller carries the decisions
// out through a [Provider]:
//
//   - [Local] runs workers as child processes of the controller (the
//     default, for one machine), with an optional startup delay per pool
//     to mimic a VM's boot and an optional capacity per pool to simulate
//     stock-outs.
//   - [Exec] calls operator scripts, so any cloud's CLI can be plugged in.
//   - The kube subpackage runs each worker as a Kubernetes pod.
//   - [WithRetry] wraps either, retrying launch failures with backoff.
//
// # Failures the controller acts on
//
// A Launch that falls short returns a [*LaunchError] matching either
// [ErrStockOut] (no capacity: reported at once, never retried, so the policy
// can fall back from spot to on-demand or to another region after its
// SpotFallbackAfter) or [ErrLaunchFailed] (anything else: worth retrying).
// Launch may return instances together with the error; they were started
// and must be tracked. Each [Instance] carries its [State], so a delayed or
// asynchronous launch that fails later shows up as Failed in List, and one
// the provider gave up on for lack of capacity as [StockedOut], which the
// controller books as a stock-out of its pool. An Instance whose ReclaimAt
// is set is about to lose its machine (a spot interruption): the controller
// records a spot notice for its worker.
//
// Instance IDs are the workers' IDs too: a provider passes its ID to the
// worker (ballast worker --id ID), so the worker registry and the provider
// agree on which worker is which.
//
// # The exec script contract
//
// Three scripts, each an argv (program and fixed arguments) to which the
// contract's arguments are appended. Each call runs in its own process
// group with the environment of the controller plus ExecOptions.Env, and is
// killed, group and all, after ExecOptions.Timeout. Scripts should be
// idempotent where they can: a call that timed out may be made again.
//
// Launch is called as
//
//	LAUNCH POOL COUNT
//
// It starts COUNT workers of POOL, each running "ballast worker --pool POOL
// --id ID" with ID the instance ID it reports, and prints one JSON object
// per line for each instance it started:
//
//	{"id":"i-0abc","pool":"spot-eu","state":"launching"}
//
// "pool" may be left out (it defaults to POOL) but may not name another
// pool; "state" is "launching" or "running"; "launched_at" and "started_at"
// (RFC 3339) are optional. Then it exits:
//
//   - 0: all COUNT started. Fewer lines than COUNT is taken as a launch
//     failure for the rest.
//   - 3: stock-out: no capacity for POOL now ([ErrStockOut]). Lines printed
//     before are instances that did start (a partial launch). Say why on
//     stderr; its last lines go into the error.
//   - anything else: failure ([ErrLaunchFailed]), with stderr's last lines
//     in the error; printed lines are again instances that did start.
//
// Blank lines are ignored. Any other line that is not such an object is
// reported as [ErrMalformedOutput], naming the line; nothing else (logs,
// progress) may go to stdout.
//
// Release is called as
//
//	RELEASE ID
//
// It asks the instance to stop: the worker must get SIGTERM (it drains:
// stops taking work, checkpoints and requeues running jobs) and may be
// force-stopped after a timeout of the script's choosing. It exits 0 once
// the request is made, without waiting for the drain, and also exits 0 for
// an ID that is unknown or already gone. Any other exit is an error.
//
// List is called as
//
//	LIST
//
// It prints, in the same format, every instance it manages, in any state
// ("launching", "running", "releasing", "gone", "failed", "stocked_out";
// "error" may say why a failed one failed), each naming its "pool", and
// exits 0. "stocked_out" is an instance the cloud accepted but never
// placed (a request parked for lack of capacity) that the script gave up
// on and cancelled: the controller books it as a stock-out of its pool,
// like a launch that exited 3. "reclaim_at" (RFC 3339) on a live instance
// is a spot interruption notice: the machine goes at that time, and the
// controller tells its worker to checkpoint and requeue before then. The
// controller reconciles with it after a restart, so it should find the
// instances from the cloud (by tag or label), not from local memory.
// Its answer is reused for ExecOptions.ListEvery (15 s by default), with
// this provider's own launches and releases applied meanwhile, so the cloud
// is not asked once per controller tick.
//
// A minimal launch script for a cloud CLI:
//
//	#!/bin/sh
//	set -eu
//	pool=$1 count=$2
//	i=0
//	while [ "$i" -lt "$count" ]; do
//	  id="$pool-$(date +%s)-$i"
//	  if ! out=$(cloud vm create --tag ballast-pool="$pool" --name "$id" \
//	      --user-data "ballast worker --pool $pool --id $id" 2>&1); then
//	    echo "$out" >&2
//	    case $out in *InsufficientCapacity*) exit 3 ;; esac
//	    exit 1
//	  fi
//	  printf '{"id":"%s","pool":"%s","state":"launching"}\n' "$id" "$pool"
//	  i=$((i + 1))
//	done
package provider
