//! `Debug` for [`RuntimeMetrics`]: every figure, then each worker's, so
//! that `{:?}` is a whole snapshot (one read of each counter, not one
//! consistent instant).

use std::fmt;

use super::RuntimeMetrics;

impl fmt::Debug for RuntimeMetrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimeMetrics")
            .field("num_workers", &self.num_workers())
            .field("num_idle_workers", &self.num_idle_workers())
            .field("num_running_workers", &self.num_running_workers())
            .field("spawned_tasks_count", &self.spawned_tasks_count())
            .field("num_alive_tasks", &self.num_alive_tasks())
            .field("total_polls", &self.total_polls())
            .field("total_steals", &self.total_steals())
            .field("total_parks", &self.total_parks())
            .field("injector_depth", &self.injector_depth())
            .field("num_timers", &self.num_timers())
            .field("yields", &self.yields())
            .field("budget_forced_yields", &self.budget_forced_yields())
            .field("yield_queue_entries", &self.yield_queue_entries())
            .field("yield_queue_rescues", &self.yield_queue_rescues())
            .field("yield_queue_depth", &self.yield_queue_depth())
            .field("demotions", &self.demotions())
            .field("promotions", &self.promotions())
            .field("scheduling_latency", &self.scheduling_latency())
            .field("poll_duration", &self.poll_duration())
            .field("yield_delay", &self.yield_delay())
            .field("long_polls", &self.long_polls())
            .field("cpu_limit", &self.cpu_limit())
            .field("throttled_periods", &self.throttled_periods())
            .field("throttled_time", &self.throttled_time())
            .field("paced_time", &self.paced_time())
            .field(
                "elastic_utilization_limit",
                &self.elastic_utilization_limit(),
            )
            .field("elastic_waiting", &self.elastic_waiting())
            .field("elastic_cpu_time", &self.elastic_cpu_time())
            .field("elastic_idle_grants", &self.elastic_idle_grants())
            .field("idle_not_serving", &self.idle_not_serving())
            .field("spread_moves", &self.spread_moves())
            .field("descheduled_stretches", &self.descheduled_stretches())
            .field("compensations", &self.compensations())
            .field("num_spare_threads", &self.num_spare_threads())
            .field("num_serving_spares", &self.num_serving_spares())
            .field("num_blocking_threads", &self.num_blocking_threads())
            .field(
                "num_idle_blocking_threads",
                &self.num_idle_blocking_threads(),
            )
            .field("blocking_queue_depth", &self.blocking_queue_depth())
            .field("attention_holds", &self.attention_holds())
            .field("workers", &Workers(self))
            .finish()
    }
}

/// The per-worker figures, one entry per worker index.
struct Workers<'a>(&'a RuntimeMetrics);

/// One worker's figures.
struct Worker<'a>(&'a RuntimeMetrics, usize);

impl fmt::Debug for Workers<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries((0..self.0.num_workers()).map(|index| Worker(self.0, index)))
            .finish()
    }
}

impl fmt::Debug for Worker<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Worker(metrics, index) = *self;
        f.debug_struct("Worker")
            .field("index", &index)
            .field("busy_duration", &metrics.worker_total_busy_duration(index))
            .field("park_count", &metrics.worker_park_count(index))
            .field(
                "park_unpark_count",
                &metrics.worker_park_unpark_count(index),
            )
            .field("noop_count", &metrics.worker_noop_count(index))
            .field("poll_count", &metrics.worker_poll_count(index))
            .field("steal_count", &metrics.worker_steal_count(index))
            .field("steal_operations", &metrics.worker_steal_operations(index))
            .field(
                "local_queue_depth",
                &metrics.worker_local_queue_depth(index),
            )
            .field(
                "local_schedule_count",
                &metrics.worker_local_schedule_count(index),
            )
            .field("mean_poll_time", &metrics.worker_mean_poll_time(index))
            .finish()
    }
}
