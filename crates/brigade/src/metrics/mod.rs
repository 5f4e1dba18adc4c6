//! Runtime metrics: cheap per-worker counters and latency histograms,
//! summed when read, which schedules are timed ([`LatencySampler`]), the
//! long-poll detector, and [`RuntimeMetrics`], the public view. The view
//! reads the scheduler only through [`MetricsSource`], which the runtime
//! implements (`runtime/metrics_source.rs`), so nothing here depends on the
//! scheduler's insides.

mod debug;
mod histogram;
pub(crate) mod long_poll;
mod per_worker;
#[cfg(feature = "tokio-compat")]
mod tokio_compat_metrics;
mod worker_counters;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crossbeam_utils::CachePadded;

pub(crate) use histogram::Histogram;
pub use histogram::LatencySnapshot;
#[cfg(feature = "tokio-compat")]
pub use tokio_compat_metrics::TokioCompatMetrics;
pub(crate) use worker_counters::WorkerCounters;

/// All counters of one runtime.
pub(crate) struct MetricsCells {
    workers: Box<[CachePadded<WorkerCounters>]>,
    /// Tasks spawned off the workers (`WorkerCounters::spawns` has the rest):
    /// a shared counter only for the spawns that do not come from a worker.
    spawned: CachePadded<AtomicU64>,
    long_polls: AtomicU64,
    /// Idle workers found not serving (`Driver::harvest_if_unserved`).
    idle_not_serving: AtomicU64,
    /// Workers the monitor moved off a shared CPU (`runtime/threads/spread.rs`).
    /// Relaxed: a count for reporting, ordered with nothing.
    spread_moves: AtomicU64,
    /// Stuck stretches left uncompensated as descheduled
    /// (`runtime/compensation/decide.rs`).
    descheduled: AtomicU64,
    /// Task class changes (`task/class.rs`): rare, so shared counters.
    demotions: AtomicU64,
    promotions: AtomicU64,
}

impl MetricsCells {
    pub(crate) fn new(num_workers: usize) -> Self {
        MetricsCells {
            workers: (0..num_workers).map(|_| CachePadded::default()).collect(),
            spawned: CachePadded::default(),
            long_polls: AtomicU64::new(0),
            idle_not_serving: AtomicU64::new(0),
            spread_moves: AtomicU64::new(0),
            descheduled: AtomicU64::new(0),
            demotions: AtomicU64::new(0),
            promotions: AtomicU64::new(0),
        }
    }

    pub(crate) fn workers(&self) -> impl Iterator<Item = &WorkerCounters> {
        self.workers.iter().map(|worker| &**worker)
    }

    /// Counts a demotion (`true`) or a promotion.
    pub(crate) fn count_class_change(&self, demoted: bool) {
        let counter = if demoted {
            &self.demotions
        } else {
            &self.promotions
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn count_long_polls(&self, count: u64) {
        self.long_polls.fetch_add(count, Ordering::Relaxed);
    }

    pub(crate) fn count_idle_not_serving(&self) {
        self.idle_not_serving.fetch_add(1, Ordering::Relaxed);
    }

    #[cfg_attr(loom, allow(dead_code))] // The monitor counts it; loom models leave the monitor out.
    pub(crate) fn count_spread_move(&self) {
        self.spread_moves.fetch_add(1, Ordering::Relaxed);
    }

    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn count_descheduled(&self) {
        self.descheduled.fetch_add(1, Ordering::Relaxed);
    }

    /// Merges one histogram of every worker.
    pub(crate) fn snapshot(&self, read: impl Fn(&WorkerCounters) -> &Histogram) -> LatencySnapshot {
        let mut snapshot = LatencySnapshot::empty();
        for worker in self.workers() {
            read(worker).add_to(&mut snapshot);
        }
        snapshot
    }

    pub(crate) fn worker(&self, index: usize) -> &WorkerCounters {
        &self.workers[index]
    }

    /// A task spawned off the workers (a worker counts its own spawns in
    /// its `WorkerCounters`).
    pub(crate) fn count_spawn(&self) {
        self.spawned.fetch_add(1, Ordering::Relaxed);
    }

    fn sum(&self, read: impl Fn(&WorkerCounters) -> &AtomicU64) -> u64 {
        self.workers
            .iter()
            .map(|worker| read(worker).load(Ordering::Relaxed))
            .sum()
    }
}

/// Which schedules are timed for the scheduling-latency histogram: one in
/// `every`, counted down per thread (so sampling costs no shared write).
///
/// `every` is at most `latency_sample_every` (the sparsest sampling, used
/// on a busy runtime; 0 turns sampling off), and the monitor thread lowers
/// it when schedules are rare ([`adapt`](Self::adapt)): one schedule in
/// `latency_sample_every` is plenty on a busy runtime, but at a thousand
/// schedules a second it would leave the elastic controller a few dozen
/// samples per window, whose "p99" is really their maximum. So each tick
/// the monitor estimates the schedule rate (samples × interval) and picks
/// the sparsest interval that still yields [`SAMPLES_PER_WINDOW`] samples
/// per window. Dense sampling happens only when schedules are rare, so its
/// cost stays at about `SAMPLES_PER_WINDOW` clock-read triples per window.
pub(crate) struct LatencySampler {
    /// The interval in force: one schedule in this many is timed. Between 1
    /// and `sparsest` (0 when sampling is off). Read with `Relaxed`: a
    /// stale value only shifts when the next sample is taken. A tuning knob
    /// no protocol reads, so not from `crate::sync`.
    every: std::sync::atomic::AtomicU32,
    /// `latency_sample_every`.
    sparsest: u32,
}

/// Samples the controller's p99 should rest on: 20 above the p99 per window.
const SAMPLES_PER_WINDOW: u64 = 2000;

crate::sync::scheduler_thread_local! {
    // Schedules left on this thread until the next sampled one.
    static SAMPLE_COUNTDOWN: std::cell::Cell<u32> = std::cell::Cell::new(1);
}

impl LatencySampler {
    /// Sampling one schedule in `latency_sample_every` (0: none).
    pub(crate) fn new(latency_sample_every: u32) -> Self {
        LatencySampler {
            every: std::sync::atomic::AtomicU32::new(latency_sample_every),
            sparsest: latency_sample_every,
        }
    }

    /// Whether the schedule being made now is to be timed.
    #[inline]
    pub(crate) fn due(&self) -> bool {
        let every = self.every.load(Ordering::Relaxed);
        if every == 0 {
            return false;
        }
        SAMPLE_COUNTDOWN.with(|countdown| {
            // `min`: a countdown started under a sparser interval catches up.
            let left = countdown.get().min(every).saturating_sub(1);
            countdown.set(if left == 0 { every } else { left });
            left == 0
        })
    }

    /// Picks the interval from the `samples` taken in the last tick, for a
    /// window of `ticks_per_window` ticks (monitor thread). Does nothing
    /// when sampling is off.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn adapt(&self, samples: u64, ticks_per_window: usize) {
        let every = u64::from(self.every.load(Ordering::Relaxed));
        if every == 0 || self.sparsest == 0 {
            return;
        }
        let schedules = samples * every;
        let wanted = SAMPLES_PER_WINDOW.div_ceil(ticks_per_window as u64);
        let every = (schedules / wanted).clamp(1, u64::from(u32::MAX)) as u32;
        self.every
            .store(every.clamp(1, self.sparsest), Ordering::Relaxed);
    }
}

/// What [`RuntimeMetrics`] reads from its runtime besides [`MetricsCells`]:
/// instantaneous depths and counts, and totals that other parts of the
/// scheduler keep. Each method is one cheap read that never blocks the
/// scheduler's hot paths; [`RuntimeMetrics`] documents what each means.
pub(crate) trait MetricsSource: Send + Sync {
    /// The runtime's counters.
    fn cells(&self) -> &MetricsCells;
    fn num_workers(&self) -> usize;
    fn num_idle_workers(&self) -> usize;
    fn num_alive_tasks(&self) -> usize;
    fn yield_queue_entries(&self) -> u64;
    fn yield_queue_rescues(&self) -> u64;
    fn yield_queue_depth(&self) -> usize;
    fn injector_depth(&self) -> usize;
    /// Tasks in worker `index`'s deque (its run-next slot not counted).
    fn worker_local_queue_depth(&self, index: usize) -> usize;
    /// The runtime's clock: nanoseconds since it started, as its workers
    /// read it (`Shared::clock_nanos`).
    fn clock_nanos(&self) -> u64;
    fn num_timers(&self) -> usize;
    fn elastic_utilization_limit(&self) -> f64;
    fn elastic_waiting(&self) -> usize;
    fn elastic_cpu_time(&self) -> Duration;
    fn elastic_idle_grants(&self) -> u64;
    fn compensations(&self) -> u64;
    fn num_spare_threads(&self) -> usize;
    fn num_serving_spares(&self) -> usize;
    fn num_blocking_threads(&self) -> usize;
    fn num_idle_blocking_threads(&self) -> usize;
    fn blocking_queue_depth(&self) -> usize;
    fn attention_holds(&self) -> usize;
    fn cpu_limit(&self) -> Option<f64>;
    fn running_workers(&self) -> usize;
    fn throttled_periods(&self) -> u64;
    fn throttled_time(&self) -> Duration;
    fn paced_time(&self) -> Duration;
    /// tokio's metrics of the runtime's tokio-compat threads, if it has them.
    #[cfg(feature = "tokio-compat")]
    fn tokio_compat(&self) -> Option<tokio::runtime::RuntimeMetrics>;
}

/// A view of a runtime's metrics, from [`Runtime::metrics`](crate::Runtime::metrics)
/// or [`Handle::metrics`](crate::Handle::metrics).
///
/// Counters are totals since the runtime started; depths and counts of
/// workers are instantaneous. Reading is cheap and never blocks the
/// scheduler's hot paths.
///
/// # Examples
///
/// ```
/// let rt = brigade::Builder::new().worker_threads(2).build()?;
/// rt.block_on(async { brigade::spawn(async {}).await }).unwrap();
/// let metrics = rt.metrics();
/// assert_eq!(metrics.num_workers(), 2);
/// assert!(metrics.spawned_tasks_count() >= 1);
/// # Ok::<(), brigade::BuildError>(())
/// ```
#[derive(Clone)]
pub struct RuntimeMetrics {
    source: Arc<dyn MetricsSource>,
}

impl RuntimeMetrics {
    pub(crate) fn new(source: Arc<dyn MetricsSource>) -> Self {
        RuntimeMetrics { source }
    }

    fn cells(&self) -> &MetricsCells {
        self.source.cells()
    }

    /// Number of worker threads.
    pub fn num_workers(&self) -> usize {
        self.source.num_workers()
    }

    /// Workers currently idle (asleep, or committed to sleeping), serving
    /// spares included: while a worker is stuck this can exceed the number
    /// of idle workers among [`num_workers`](Self::num_workers).
    pub fn num_idle_workers(&self) -> usize {
        self.source.num_idle_workers()
    }

    /// Tasks spawned with `spawn` since the runtime started.
    pub fn spawned_tasks_count(&self) -> u64 {
        let cells = self.cells();
        cells.spawned.load(Ordering::Relaxed) + cells.sum(|worker| &worker.spawns)
    }

    /// Tasks alive right now (spawned, not yet finished or cancelled);
    /// `spawn_blocking` tasks are not counted.
    pub fn num_alive_tasks(&self) -> usize {
        self.source.num_alive_tasks()
    }

    /// Times [`yield_if_busy`](crate::yield_if_busy) actually gave way, by
    /// moving behind a waiting task or by stepping aside into the yield queue, and
    /// times a background task's self-wake stepped aside into the yield
    /// queue (see [`TaskClass`](crate::task::TaskClass)).
    pub fn yields(&self) -> u64 {
        self.cells().sum(|worker| &worker.yields)
    }

    /// Times the cooperative budget made a poll yield (a task's, or a
    /// current-thread runtime's `block_on` future's): it had spent its
    /// units on brigade's resources (sockets, timers, join handles; see
    /// [`task::coop`](crate::task::coop)) while other work waited for its
    /// worker. A budget spent while nothing waited is refilled and not
    /// counted. Not part of [`yields`](Self::yields).
    pub fn budget_forced_yields(&self) -> u64 {
        self.cells().sum(|worker| &worker.budget_forced_yields)
    }

    /// Times a task stepped aside into the yield queue (a subset of
    /// [`yields`](Self::yields)).
    pub fn yield_queue_entries(&self) -> u64 {
        self.source.yield_queue_entries()
    }

    /// Times an entry of the yield queue that had waited longer than
    /// [`Builder::max_yield_delay`](crate::Builder::max_yield_delay) was
    /// rescued: taken out ahead of other work and given a slice.
    pub fn yield_queue_rescues(&self) -> u64 {
        self.source.yield_queue_rescues()
    }

    /// Times a [`TaskClass::Auto`](crate::task::TaskClass::Auto) task was
    /// demoted to background, having only woken itself several times in a
    /// row (see [`Builder::demote_background`](crate::Builder::demote_background)).
    pub fn demotions(&self) -> u64 {
        self.cells().demotions.load(Ordering::Relaxed)
    }

    /// Times a demoted task was promoted back to foreground, woken by I/O,
    /// a timer or another task.
    pub fn promotions(&self) -> u64 {
        self.cells().promotions.load(Ordering::Relaxed)
    }

    /// Tasks waiting in the yield queue right now.
    pub fn yield_queue_depth(&self) -> usize {
        self.source.yield_queue_depth()
    }

    /// Tasks waiting in the global injector right now.
    pub fn injector_depth(&self) -> usize {
        self.source.injector_depth()
    }

    /// Tasks polled by all workers since the runtime started.
    pub fn total_polls(&self) -> u64 {
        self.cells().sum(|worker| &worker.polls)
    }

    /// Successful steals from another worker's deque.
    pub fn total_steals(&self) -> u64 {
        self.cells().sum(|worker| &worker.steals)
    }

    /// Times a worker's thread parked: went to sleep, having found no work.
    pub fn total_parks(&self) -> u64 {
        self.cells().sum(|worker| &worker.parks)
    }

    /// Timers (sleeps, timeouts, intervals) registered right now.
    pub fn num_timers(&self) -> usize {
        self.source.num_timers()
    }

    /// Scheduling latency since the runtime started: time from a task
    /// becoming runnable (spawned, woken, or taken from the yield queue) to
    /// the start of its poll, for the sampled schedules (see
    /// [`Builder::latency_sample_every`](crate::Builder::latency_sample_every)).
    /// Time spent waiting in the yield queue is not included: see
    /// [`yield_delay`](Self::yield_delay). Take the difference of two
    /// snapshots with [`LatencySnapshot::since`] for a window, and read its
    /// p99 with [`quantile(0.99)`](LatencySnapshot::quantile) (example on
    /// [`Runtime::metrics`](crate::Runtime::metrics)).
    pub fn scheduling_latency(&self) -> LatencySnapshot {
        self.cells().snapshot(|worker| &worker.scheduling_latency)
    }

    /// Durations of the sampled polls.
    pub fn poll_duration(&self) -> LatencySnapshot {
        self.cells().snapshot(|worker| &worker.poll_duration)
    }

    /// How long tasks waited in the yield queue.
    pub fn yield_delay(&self) -> LatencySnapshot {
        self.cells().snapshot(|worker| &worker.yield_delay)
    }

    /// The CPU limit in force, in CPUs ([`Builder::cpu_limit`](crate::Builder::cpu_limit)):
    /// the cgroup's quota (read again about once a second) or a fixed
    /// value; `None` without one.
    pub fn cpu_limit(&self) -> Option<f64> {
        self.source.cpu_limit()
    }

    /// Workers that run under the CPU limit now: the limit rounded up, at
    /// most [`num_workers`](Self::num_workers); the others are parked
    /// while the limit is lower, and are not counted idle.
    pub fn num_running_workers(&self) -> usize {
        self.source.running_workers()
    }

    /// Periods in which the kernel throttled the runtime's cgroup (its
    /// quota spent before the period ended), since the runtime started:
    /// the cgroup's `cpu.stat` `nr_throttled`. 0 without a cgroup limit.
    pub fn throttled_periods(&self) -> u64 {
        self.source.throttled_periods()
    }

    /// How long the kernel held the cgroup's threads back by throttling,
    /// since the runtime started (`cpu.stat`'s `throttled_usec` on cgroup
    /// v2, `throttled_time` on v1).
    pub fn throttled_time(&self) -> Duration {
        self.source.throttled_time()
    }

    /// How long background work was held back by pacing to the CPU limit,
    /// since the runtime started (the windows' paced stretches; see
    /// [`Builder::cpu_limit`](crate::Builder::cpu_limit)).
    pub fn paced_time(&self) -> Duration {
        self.source.paced_time()
    }

    /// The elastic CPU utilization limit now, as a fraction of all workers'
    /// CPU.
    pub fn elastic_utilization_limit(&self) -> f64 {
        self.source.elastic_utilization_limit()
    }

    /// Elastic tasks waiting for admission right now.
    pub fn elastic_waiting(&self) -> usize {
        self.source.elastic_waiting()
    }

    /// CPU time used by elastic tasks since the runtime started.
    pub fn elastic_cpu_time(&self) -> Duration {
        self.source.elastic_cpu_time()
    }

    /// Grants of CPU given to elastic tasks by workers that had nothing
    /// else to run, without tokens, since the runtime started (see
    /// [`ElasticConfig::use_idle_workers`](crate::ElasticConfig::use_idle_workers)).
    pub fn elastic_idle_grants(&self) -> u64 {
        self.source.elastic_idle_grants()
    }

    /// Polls (or stretches between two yield points of one) that ran
    /// longer than the long-poll threshold (see
    /// [`Builder::long_poll_threshold`](crate::Builder::long_poll_threshold)).
    /// Each is counted once, when the monitor first sees it past the
    /// threshold, while it is still running.
    pub fn long_polls(&self) -> u64 {
        self.cells().long_polls.load(Ordering::Relaxed)
    }

    /// How many times an idle worker was found not serving: I/O events or
    /// a due timer were pending while the worker watching the driver had
    /// harvested nothing for an epoch (≈ 33 µs) or more, as happens when
    /// every CPU of the host is taken (clients on the same machine, a CPU
    /// limit, neighbours) and the kernel has woken that worker but not yet
    /// run it. A busy worker then served that work itself, stepping aside
    /// from its `yield_if_busy()` loop for it. On a host with CPU to spare
    /// it stays low: the watcher usually harvests first, and a busy worker
    /// only occasionally wins the race for work that arrives after a quiet
    /// spell. It stays 0 with
    /// [`Builder::crowded_host_handoff(false)`](crate::Builder::crowded_host_handoff).
    pub fn idle_not_serving(&self) -> u64 {
        self.cells().idle_not_serving.load(Ordering::Relaxed)
    }

    /// How many times the monitor moved a worker off a CPU that another
    /// runnable worker had shared with it for several samples, onto an
    /// idle CPU of its mask that no runnable worker held: the kernel places
    /// a thread mostly as it wakes, and a worker that never sleeps (one
    /// with background work to run) can be left beside another for seconds
    /// while a CPU idles. It stays 0 while the kernel keeps the busy
    /// workers apart, when no allowed CPU idles, and with
    /// [`Builder::spread_workers(false)`](crate::Builder::spread_workers).
    pub fn spread_moves(&self) -> u64 {
        self.cells().spread_moves.load(Ordering::Relaxed)
    }

    /// Stretches past the compensation threshold (see
    /// [`Builder::compensation_threshold`](crate::Builder::compensation_threshold))
    /// whose worker was not blocked but runnable and waiting for a CPU: the
    /// OS had descheduled it on a crowded host, so no spare took its place.
    /// Each is counted once, while it is still running.
    pub fn descheduled_stretches(&self) -> u64 {
        self.cells().descheduled.load(Ordering::Relaxed)
    }

    /// How many times a spare worker started serving in place of a stuck
    /// worker or of one in
    /// [`block_in_place`](crate::task::block_in_place) (see
    /// [`Builder::compensation_threshold`](crate::Builder::compensation_threshold)).
    pub fn compensations(&self) -> u64 {
        self.source.compensations()
    }

    /// Spare worker threads alive right now: serving, or resting for their
    /// keep-alive. 0 once no worker has been stuck for the keep-alive.
    pub fn num_spare_threads(&self) -> usize {
        self.source.num_spare_threads()
    }

    /// Spare worker threads serving right now, in place of stuck workers.
    /// So `num_workers() + num_serving_spares()` threads run tasks.
    pub fn num_serving_spares(&self) -> usize {
        self.source.num_serving_spares()
    }

    /// Threads in the blocking pool right now.
    pub fn num_blocking_threads(&self) -> usize {
        self.source.num_blocking_threads()
    }

    /// Blocking-pool threads waiting for work right now.
    pub fn num_idle_blocking_threads(&self) -> usize {
        self.source.num_idle_blocking_threads()
    }

    /// `spawn_blocking` tasks waiting for a thread right now.
    pub fn blocking_queue_depth(&self) -> usize {
        self.source.blocking_queue_depth()
    }

    /// Attention holds out right now (`runtime/scheduler/attention.rs`): one per
    /// aborted task whose future is not dropped yet, plus one for good once
    /// shutdown began. A test hook, not a stable metric: the tests read it
    /// to see that no abort leaves a hold behind (a leaked hold sends every
    /// `yield_if_busy()` down its slow path, which no other metric shows).
    #[doc(hidden)]
    pub fn attention_holds(&self) -> usize {
        self.source.attention_holds()
    }
}
