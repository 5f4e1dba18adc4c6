//! Publishing [`RuntimeMetrics`] through the `metrics` facade (feature
//! `metrics`), so that whichever exporter the program installed
//! (Prometheus, StatsD, OpenTelemetry, ...) shows the runtime.
//!
//! Every figure is a gauge or a counter named `brigade_*`; per-worker
//! figures carry a `worker` label (the worker's index), the latency
//! histograms a `quantile` label ("0.5", "0.99", "1" for the maximum).
//! Counters are set to the runtime's running totals
//! (`Counter::absolute`), so publishing twice never counts twice; times are
//! gauges in seconds. A publish reads each figure once: a set of
//! consistent-enough values, not one instant.

use std::time::Duration;

use metrics::{counter, gauge};

use crate::metrics::{LatencySnapshot, RuntimeMetrics};

impl RuntimeMetrics {
    /// Publishes every figure once through the `metrics` facade, to the
    /// recorder the program installed (nothing happens without one).
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = brigade::Builder::new().worker_threads(2).build()?;
    /// // With an exporter installed (`metrics::set_global_recorder`),
    /// // `brigade_polls_total`, `brigade_worker_polls_total{worker="0"}`, ...
    /// // appear in it.
    /// rt.metrics().publish();
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn publish(&self) {
        self.publish_totals();
        self.publish_scheduling();
        self.publish_limits();
        self.publish_threads();
        for worker in 0..self.num_workers() {
            self.publish_worker(worker);
        }
    }

    /// Publishes every `interval`, for as long as the returned future runs:
    /// spawn it on the runtime (a background task that wakes once per
    /// interval) and abort it to stop.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = brigade::Builder::new().worker_threads(2).build()?;
    /// let publisher = rt.spawn(rt.metrics().publish_every(Duration::from_secs(1)));
    /// // ...
    /// publisher.abort();
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub async fn publish_every(self, interval: Duration) {
        let mut ticks = crate::time::interval(interval);
        loop {
            ticks.tick().await;
            self.publish();
        }
    }

    fn publish_totals(&self) {
        gauge!("brigade_workers").set(self.num_workers() as f64);
        gauge!("brigade_idle_workers").set(self.num_idle_workers() as f64);
        gauge!("brigade_running_workers").set(self.num_running_workers() as f64);
        counter!("brigade_spawned_tasks_total").absolute(self.spawned_tasks_count());
        gauge!("brigade_alive_tasks").set(self.num_alive_tasks() as f64);
        counter!("brigade_polls_total").absolute(self.total_polls());
        counter!("brigade_steals_total").absolute(self.total_steals());
        counter!("brigade_parks_total").absolute(self.total_parks());
        gauge!("brigade_global_queue_depth").set(self.injector_depth() as f64);
        gauge!("brigade_timers").set(self.num_timers() as f64);
        counter!("brigade_long_polls_total").absolute(self.long_polls());
    }

    /// The figures brigade adds to tokio's: yields, the yield queue, task
    /// classes, the budget and the latency histograms.
    fn publish_scheduling(&self) {
        counter!("brigade_yields_total").absolute(self.yields());
        counter!("brigade_budget_forced_yields_total").absolute(self.budget_forced_yields());
        counter!("brigade_yield_queue_entries_total").absolute(self.yield_queue_entries());
        counter!("brigade_yield_queue_rescues_total").absolute(self.yield_queue_rescues());
        gauge!("brigade_yield_queue_depth").set(self.yield_queue_depth() as f64);
        counter!("brigade_demotions_total").absolute(self.demotions());
        counter!("brigade_promotions_total").absolute(self.promotions());
        latency(
            "brigade_scheduling_latency_seconds",
            &self.scheduling_latency(),
        );
        latency("brigade_poll_duration_seconds", &self.poll_duration());
        latency("brigade_yield_delay_seconds", &self.yield_delay());
    }

    /// The CPU limit and elastic admission.
    fn publish_limits(&self) {
        gauge!("brigade_cpu_limit").set(self.cpu_limit().unwrap_or(0.0));
        counter!("brigade_throttled_periods_total").absolute(self.throttled_periods());
        gauge!("brigade_throttled_seconds").set(seconds(self.throttled_time()));
        gauge!("brigade_paced_seconds").set(seconds(self.paced_time()));
        gauge!("brigade_elastic_utilization_limit").set(self.elastic_utilization_limit());
        gauge!("brigade_elastic_waiting").set(self.elastic_waiting() as f64);
        gauge!("brigade_elastic_cpu_seconds").set(seconds(self.elastic_cpu_time()));
        counter!("brigade_elastic_idle_grants_total").absolute(self.elastic_idle_grants());
    }

    /// Spares, compensation, spreading and the blocking pool.
    fn publish_threads(&self) {
        counter!("brigade_idle_not_serving_total").absolute(self.idle_not_serving());
        counter!("brigade_spread_moves_total").absolute(self.spread_moves());
        counter!("brigade_descheduled_stretches_total").absolute(self.descheduled_stretches());
        counter!("brigade_compensations_total").absolute(self.compensations());
        gauge!("brigade_spare_threads").set(self.num_spare_threads() as f64);
        gauge!("brigade_serving_spares").set(self.num_serving_spares() as f64);
        gauge!("brigade_blocking_threads").set(self.num_blocking_threads() as f64);
        gauge!("brigade_idle_blocking_threads").set(self.num_idle_blocking_threads() as f64);
        gauge!("brigade_blocking_queue_depth").set(self.blocking_queue_depth() as f64);
    }

    fn publish_worker(&self, worker: usize) {
        let label = [("worker", worker.to_string())];
        gauge!("brigade_worker_busy_seconds", &label)
            .set(seconds(self.worker_total_busy_duration(worker)));
        counter!("brigade_worker_parks_total", &label).absolute(self.worker_park_count(worker));
        counter!("brigade_worker_park_unparks_total", &label)
            .absolute(self.worker_park_unpark_count(worker));
        counter!("brigade_worker_noops_total", &label).absolute(self.worker_noop_count(worker));
        counter!("brigade_worker_polls_total", &label).absolute(self.worker_poll_count(worker));
        counter!("brigade_worker_stolen_tasks_total", &label)
            .absolute(self.worker_steal_count(worker));
        counter!("brigade_worker_steals_total", &label)
            .absolute(self.worker_steal_operations(worker));
        gauge!("brigade_worker_local_queue_depth", &label)
            .set(self.worker_local_queue_depth(worker) as f64);
        counter!("brigade_worker_local_schedules_total", &label)
            .absolute(self.worker_local_schedule_count(worker));
        gauge!("brigade_worker_mean_poll_time_seconds", &label)
            .set(seconds(self.worker_mean_poll_time(worker)));
    }
}

/// A histogram's median, 99th percentile and maximum, as gauges labelled
/// by quantile (a summary's shape, which every exporter understands).
fn latency(name: &'static str, snapshot: &LatencySnapshot) {
    for (quantile, value) in [
        ("0.5", snapshot.quantile(0.5)),
        ("0.99", snapshot.quantile(0.99)),
        ("1", snapshot.max()),
    ] {
        gauge!(name, "quantile" => quantile).set(seconds(value));
    }
}

fn seconds(duration: Duration) -> f64 {
    duration.as_secs_f64()
}
