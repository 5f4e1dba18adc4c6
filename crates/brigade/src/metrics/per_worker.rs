//! [`RuntimeMetrics`]'s per-worker figures, under tokio's names
//! (`tokio::runtime::RuntimeMetrics::worker_*`), so that dashboards built
//! for tokio-metrics port. Each reads the one worker's own counters
//! (`metrics/worker_counters.rs`); the totals elsewhere sum them.
//!
//! Worker indices run from 0 to `num_workers() - 1`, as on tokio, and an
//! index past them panics, as on tokio. Spare workers (which serve in
//! place of a stuck worker, `Builder::compensation_threshold`) have no
//! index: what they do counts in the totals only.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{RuntimeMetrics, WorkerCounters};

impl RuntimeMetrics {
    /// The counters of worker `worker`, panicking as tokio does past the
    /// last worker.
    fn worker_counters(&self, worker: usize) -> &WorkerCounters {
        let workers = self.num_workers();
        assert!(
            worker < workers,
            "worker index {worker} out of range: the runtime has {workers} workers \
             (indices 0 to num_workers() - 1)"
        );
        self.cells().worker(worker)
    }

    /// How long worker `worker` has been busy since the runtime started:
    /// its thread's time outside parks (running tasks, or looking for
    /// them), as tokio's `worker_total_busy_duration`. Taken from the clock
    /// reads the worker makes anyway as it parks and unparks, so it costs
    /// the poll path nothing; a worker running now counts up to now.
    ///
    /// # Panics
    ///
    /// If `worker` is not below [`num_workers`](Self::num_workers), as on
    /// tokio.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = brigade::Builder::new().worker_threads(2).build()?;
    /// rt.block_on(async { brigade::spawn(async {}).await }).unwrap();
    /// let metrics = rt.metrics();
    /// let busy: std::time::Duration = (0..metrics.num_workers())
    ///     .map(|worker| metrics.worker_total_busy_duration(worker))
    ///     .sum();
    /// assert!(busy > std::time::Duration::ZERO);
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn worker_total_busy_duration(&self, worker: usize) -> Duration {
        let now = self.source.clock_nanos();
        Duration::from_nanos(self.worker_counters(worker).busy.busy_nanos(now))
    }

    /// Times worker `worker` parked, having found no work (its part of
    /// [`total_parks`](Self::total_parks)), as tokio's `worker_park_count`.
    ///
    /// # Panics
    ///
    /// If `worker` is not below [`num_workers`](Self::num_workers).
    pub fn worker_park_count(&self, worker: usize) -> u64 {
        read(&self.worker_counters(worker).parks)
    }

    /// Parks plus unparks of worker `worker`, as tokio's
    /// `worker_park_unpark_count`: odd while the worker is parked, even
    /// while it runs, so two reads tell whether it woke in between.
    ///
    /// # Panics
    ///
    /// If `worker` is not below [`num_workers`](Self::num_workers).
    pub fn worker_park_unpark_count(&self, worker: usize) -> u64 {
        read(&self.worker_counters(worker).park_unparks)
    }

    /// Times worker `worker` unparked and parked again without polling a
    /// task, as tokio's `worker_noop_count`.
    ///
    /// # Panics
    ///
    /// If `worker` is not below [`num_workers`](Self::num_workers).
    pub fn worker_noop_count(&self, worker: usize) -> u64 {
        read(&self.worker_counters(worker).noops)
    }

    /// Tasks worker `worker` has polled (its part of
    /// [`total_polls`](Self::total_polls)), as tokio's `worker_poll_count`.
    ///
    /// # Panics
    ///
    /// If `worker` is not below [`num_workers`](Self::num_workers).
    pub fn worker_poll_count(&self, worker: usize) -> u64 {
        read(&self.worker_counters(worker).polls)
    }

    /// Tasks worker `worker` stole from other workers (a steal takes half
    /// a deque: the task it runs and the batch behind), as tokio's
    /// `worker_steal_count`. Batches taken from the injector are not steals.
    ///
    /// # Panics
    ///
    /// If `worker` is not below [`num_workers`](Self::num_workers).
    pub fn worker_steal_count(&self, worker: usize) -> u64 {
        read(&self.worker_counters(worker).stolen_tasks)
    }

    /// Steals worker `worker` made, each taking one or more tasks (its part
    /// of [`total_steals`](Self::total_steals)), as tokio's
    /// `worker_steal_operations`.
    ///
    /// # Panics
    ///
    /// If `worker` is not below [`num_workers`](Self::num_workers).
    pub fn worker_steal_operations(&self, worker: usize) -> u64 {
        read(&self.worker_counters(worker).steals)
    }

    /// Tasks in worker `worker`'s deque right now, as tokio's
    /// `worker_local_queue_depth` (which, like this, leaves out the task in
    /// the worker's run-next slot, tokio's LIFO slot).
    ///
    /// # Panics
    ///
    /// If `worker` is not below [`num_workers`](Self::num_workers).
    pub fn worker_local_queue_depth(&self, worker: usize) -> usize {
        self.worker_counters(worker);
        self.source.worker_local_queue_depth(worker)
    }

    /// Tasks that code on worker `worker` spawned or woke into that
    /// worker's own deque or run-next slot, as tokio's
    /// `worker_local_schedule_count`.
    ///
    /// # Panics
    ///
    /// If `worker` is not below [`num_workers`](Self::num_workers).
    pub fn worker_local_schedule_count(&self, worker: usize) -> u64 {
        read(&self.worker_counters(worker).local_schedules)
    }

    /// Times worker `worker`'s deque overflowed into the injector: always
    /// 0, truthfully. tokio's local queue holds 256 tasks and moves half of
    /// them to the global queue when full (its `worker_overflow_count`);
    /// brigade's deques grow as needed and never overflow. Kept so that
    /// code and dashboards written for tokio read it.
    ///
    /// # Panics
    ///
    /// If `worker` is not below [`num_workers`](Self::num_workers).
    pub fn worker_overflow_count(&self, worker: usize) -> u64 {
        self.worker_counters(worker);
        0
    }

    /// The mean duration of worker `worker`'s polls, as tokio's
    /// `worker_mean_poll_time`, over the sampled polls (those whose
    /// schedule was timed, [`Builder::latency_sample_every`](crate::Builder::latency_sample_every))
    /// since the runtime started; tokio's is a moving average of recent
    /// polls. Zero before a sampled poll, and with sampling off.
    ///
    /// # Panics
    ///
    /// If `worker` is not below [`num_workers`](Self::num_workers).
    pub fn worker_mean_poll_time(&self, worker: usize) -> Duration {
        let mut snapshot = super::LatencySnapshot::empty();
        self.worker_counters(worker)
            .poll_duration
            .add_to(&mut snapshot);
        snapshot.mean()
    }

    /// Tasks waiting in the global injector right now: tokio's name for
    /// [`injector_depth`](Self::injector_depth).
    pub fn global_queue_depth(&self) -> usize {
        self.injector_depth()
    }

    /// tokio's name for [`budget_forced_yields`](Self::budget_forced_yields):
    /// times the cooperative budget made a task yield.
    pub fn budget_forced_yield_count(&self) -> u64 {
        self.budget_forced_yields()
    }
}

fn read(counter: &std::sync::atomic::AtomicU64) -> u64 {
    counter.load(Ordering::Relaxed)
}
