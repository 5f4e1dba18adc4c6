//! The runtime's side of the metrics view: what [`RuntimeMetrics`] reads,
//! through [`MetricsSource`], from the scheduler's shared state.
//!
//! [`RuntimeMetrics`]: crate::RuntimeMetrics

use std::time::Duration;

use crate::metrics::{MetricsCells, MetricsSource};
use crate::runtime::Shared;

impl MetricsSource for Shared {
    fn cells(&self) -> &MetricsCells {
        &self.metrics
    }

    fn num_workers(&self) -> usize {
        Shared::num_workers(self)
    }

    fn num_idle_workers(&self) -> usize {
        self.idle.num_idle()
    }

    fn num_alive_tasks(&self) -> usize {
        self.registry.len()
    }

    fn yield_queue_entries(&self) -> u64 {
        self.yield_queue.entered_total()
    }

    fn yield_queue_rescues(&self) -> u64 {
        self.yield_rescue.rescues()
    }

    fn yield_queue_depth(&self) -> usize {
        self.yield_queue.len()
    }

    fn injector_depth(&self) -> usize {
        self.injector.len()
    }

    fn worker_local_queue_depth(&self, index: usize) -> usize {
        self.stealers[index].len()
    }

    fn clock_nanos(&self) -> u64 {
        Shared::clock_nanos(self)
    }

    fn num_timers(&self) -> usize {
        self.driver.num_timers()
    }

    fn elastic_utilization_limit(&self) -> f64 {
        self.admission.limit()
    }

    fn elastic_waiting(&self) -> usize {
        self.admission.waiting()
    }

    fn elastic_cpu_time(&self) -> Duration {
        self.admission.cpu_time()
    }

    fn elastic_idle_grants(&self) -> u64 {
        self.admission.idle_grants()
    }

    fn compensations(&self) -> u64 {
        self.compensation.started()
    }

    fn num_spare_threads(&self) -> usize {
        self.compensation.threads().0
    }

    fn num_serving_spares(&self) -> usize {
        self.compensation.serving()
    }

    fn num_blocking_threads(&self) -> usize {
        self.blocking.num_threads()
    }

    fn num_idle_blocking_threads(&self) -> usize {
        self.blocking.num_idle_threads()
    }

    fn blocking_queue_depth(&self) -> usize {
        self.blocking.queue_depth()
    }

    fn attention_holds(&self) -> usize {
        self.idle.attention().holds()
    }

    fn cpu_limit(&self) -> Option<f64> {
        self.cpu.pacer.limit()
    }

    fn running_workers(&self) -> usize {
        self.cpu.running_workers()
    }

    fn throttled_periods(&self) -> u64 {
        self.cpu.throttled_periods()
    }

    fn throttled_time(&self) -> Duration {
        self.cpu.throttled_time()
    }

    fn paced_time(&self) -> Duration {
        self.cpu.pacer.paced()
    }

    #[cfg(feature = "tokio-compat")]
    fn tokio_compat(&self) -> Option<tokio::runtime::RuntimeMetrics> {
        self.tokio_compat.get().map(|compat| compat.metrics())
    }
}
