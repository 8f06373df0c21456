// Package telemetry holds the controller's metrics: OpenTelemetry
// instruments recorded through a [Metrics] value and exported in the
// Prometheus text format by [Metrics.Handler], and additionally pushed over
// OTLP/HTTP when the standard OTEL_EXPORTER_OTLP_* environment variables name
// an endpoint.
//
// Every [Metrics] owns its MeterProvider and its Prometheus registry; nothing
// is registered globally, so tests and several controllers in one process
// never see each other's values.
//
// Instruments (OpenTelemetry name → Prometheus name with the default
// namespace "ballast"):
//
//	ballast.job.wait            → ballast_job_wait_seconds (histogram; class, pool)
//	ballast.jobs.finished       → ballast_jobs_finished_total (counter; class, outcome)
//	ballast.preemptions         → ballast_preemptions_total (counter; reason)
//	ballast.overflows           → ballast_overflows_total (counter; pool)
//	ballast.queue.depth         → ballast_queue_depth (gauge; queue)
//	ballast.queue.oldest_age    → ballast_queue_oldest_age_seconds (gauge; queue)
//	ballast.slots               → ballast_slots (gauge; pool, kind, state)
//	ballast.workers             → ballast_workers (gauge; pool, state)
//	ballast.fixed.idle_ratio    → ballast_fixed_idle_ratio (gauge)
//	ballast.fixed.idle_ratio_hour → ballast_fixed_idle_ratio_hour (gauge)
//	ballast.cost.rate           → ballast_cost_rate_per_hour (gauge; pool)
//	ballast.cost.pool_today     → ballast_cost_pool_today (gauge; pool)
//	ballast.cost.team_today     → ballast_cost_team_today (gauge; team)
//	ballast.worker.qos_limits   → ballast_worker_qos_limits (gauge; worker, mode, state)
//	ballast.worker.self_fences  → ballast_worker_self_fences_total (counter; worker, pool)
//	ballast.worker.self_fenced  → ballast_worker_self_fenced_seconds_total (counter; worker, pool)
//	ballast.job.cpu_throttled   → ballast_job_cpu_throttled_seconds_total (counter; group)
//	ballast.job.io              → ballast_job_io_bytes_total (counter; group, direction)
//	ballast.job.memory_kills    → ballast_job_memory_kills_total (counter; group)
//	ballast.checkpoint.uploaded → ballast_checkpoint_uploaded_bytes_total (counter)
//	ballast.checkpoint.restored → ballast_checkpoint_restored_bytes_total (counter)
//	ballast.checkpoint.upload_duration  → ballast_checkpoint_upload_duration_seconds (histogram)
//	ballast.checkpoint.restore_duration → ballast_checkpoint_restore_duration_seconds (histogram)
//	ballast.checkpoint.refused  → ballast_checkpoint_refused_total (counter)
//	ballast.checkpoint.fallbacks → ballast_checkpoint_fallbacks_total (counter; cause)
//	ballast.redis.durable       → ballast_redis_durable (gauge)
//	ballast.redis.data_lost     → ballast_redis_data_lost (gauge)
//	ballast.redis.data_lost_at  → ballast_redis_data_lost_at_seconds (gauge)
//	ballast.nats.connected      → ballast_nats_connected (gauge; bus.go, every process)
//	ballast.nats.disconnected   → ballast_nats_disconnected_seconds_total (counter)
//	ballast.nats.disconnects    → ballast_nats_disconnects_total (counter)
//	ballast.share.slots         → ballast_share_slots (gauge; team)
//	ballast.share.used          → ballast_share_used (gauge; team, where)
//	ballast.share.lent          → ballast_share_lent (gauge; team, to)
//	ballast.share.idle          → ballast_share_idle (gauge; team)
//	ballast.share.owner_wait    → ballast_share_owner_wait_seconds (gauge; team)
//	ballast.share.reclaims      → ballast_share_reclaims_total (counter; team, owner, rule)
//	ballast.share.admissions    → ballast_share_admissions_total (counter; team, owner)
//
// The gauges are asynchronous: the controller hands over a [Snapshot] each
// tick with [Metrics.SetSnapshot] and the values are read from it at
// collection time, so a scrape never blocks the control loop.
//
// Besides metrics: [InstallTracing] sets the process's global
// TracerProvider (OTLP when configured), the one global this package
// touches, since spans cross every package; [Metrics.Follow] subscribes to the event
// bus for the counters events drive, and [Collect] reads the store for the
// gauges of a snapshot.
package telemetry
