// Package pipeline owns the pure core of cron pipelines: the config types
// (Pipeline, Step), their validation for validate-config, the schedule
// (a cron spec in a time zone, as a Next function), the firing decision (Decide,
// with catch-up after downtime), the overlap decision, the DAG of steps
// (Order, Ready, RunState), step placement (StepClass) and deadlines.
//
// Nothing here reads the clock, sleeps, starts goroutines or talks to Redis or
// NATS: the controller's loop takes "now" once per tick, asks this package
// what to do, and applies the answer through its adapters. That keeps every
// decision reproducible in a unit test with a fixed time.
//
// # Daylight saving time
//
// Schedules run in their configured zone (UTC when none is given) and follow
// the rules of Vixie cron, which operators already expect:
//
//   - When clocks spring forward, a schedule with fixed hours (a daily 02:30)
//     whose time falls into the skipped hour fires once at the moment of the
//     jump (03:00 new time) instead of missing the day. robfig/cron alone
//     would skip that day.
//   - When clocks fall back, a schedule with fixed hours fires once, at the
//     first occurrence of the repeated wall time. robfig/cron alone fires
//     twice (01:30 EDT and 01:30 EST).
//   - Schedules that run every hour (hour field "*") keep their real-time
//     rhythm through both changes: the nonexistent hour is simply not there,
//     and the repeated hour runs twice, one real hour apart.
//
// The package imports time/tzdata so zone names resolve the same way on a
// minimal container image without /usr/share/zoneinfo as on a developer
// machine; a config that validates in CI then also loads in production.
package pipeline
