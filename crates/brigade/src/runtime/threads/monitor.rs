//! The monitor thread: a small thread that keeps ticking while every worker
//! is busy. It
//! - ticks elastic admission's controller every `sample_period`
//!   ([`Admission::tick`]), feeding it the p99 scheduling latency over the
//!   last `window` (the difference between the newest and the oldest of a
//!   ring of cumulative snapshots);
//! - admits elastic tasks waiting in the admission queue as soon as the
//!   token bucket has tokens again (or, for coarse tasks, a coarse slot is
//!   free);
//! - samples the workers' poll records for the long-poll detector, and
//!   covers workers stuck past the compensation threshold while work waits
//!   and no worker is idle, starting spare workers for them, unless the
//!   kernel says a spare cannot help: the worker is runnable, waiting for a
//!   CPU or computing on a host with no idle CPU (the decision is
//!   `compensation::decide::compensate`, in `compensation/decide.rs`);
//! - announces a task scheduled without a notification (into a worker's
//!   run-next slot or empty deque) by a poll that has not returned since:
//!   opens the slot to stealers and wakes a sleeping worker
//!   (`announce_waiting_spawns`);
//! - hands the driver on when workers sleep but none sleeps in the driver
//!   (`Idle::hand_off_driver`), at every wake-up: the worker that slept in
//!   it may have left to run a task that never returns to the scheduler (a
//!   `yield_if_busy()` loop, which sees a worker idle and so never polls
//!   I/O and timers itself), and without this nobody would poll them. Doing
//!   it here keeps the wake-up off the path of every request (a worker
//!   that leaves the driver for a short task comes back to it itself); the
//!   price is that I/O and timers can wait one monitor period (see
//!   [`sample_interval`]; else the controller's tick) in that case;
//! - keeps the scheduling-latency sampling dense enough for a p99 when
//!   schedules are rare (`LatencySampler::adapt`, `metrics/mod.rs`);
//! - at each sample, moves a worker that the kernel has left on another
//!   busy worker's CPU while a CPU is free (D1 of `policy.rs`,
//!   `spread.rs`).
//!
//! It sleeps on the admission condvar (woken when a task starts waiting,
//! when a coarse slot is given back while tasks wait, and at shutdown) with
//! the nearest of those deadlines as its timeout
//! ([`Admission::wait_and_admit`]).
//!
//! [`Admission::tick`]: crate::admission::Admission::tick
//! [`Admission::wait_and_admit`]: crate::admission::Admission::wait_and_admit

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::metrics::LatencySnapshot;
use crate::metrics::long_poll::{LongPollDetector, Running};
use crate::runtime::Shared;
use crate::runtime::compensation::decide::{self, StuckJudge};
use crate::runtime::cpu_limit::LimitReader;
use crate::runtime::threads::spread::Spreader;

/// Starts the monitor thread.
///
/// The monitor is set up here, on the thread that builds the runtime, not
/// on its own thread: setting up reads the CPU count
/// (`available_parallelism` opens cgroup files for a moment) and opens
/// `/proc/loadavg`, which the monitor then keeps open and reads in place.
/// Done on the monitor thread, that happened at some unknown time after
/// `build` returned, so a program that counts its descriptors (one that has
/// just used them all up, say) could see one taken, then freed behind its
/// back. While it runs, the monitor opens no file: the workers' stat files
/// are open too (`compensation/stat_files.rs`).
pub(crate) fn start(
    shared: Arc<Shared>,
    name: String,
    limit: LimitReader,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let monitor = Monitor::new(shared, limit);
    std::thread::Builder::new()
        .name(name)
        .spawn(move || monitor.run())
}

/// F1 of the policy (`policy.rs`): how often the monitor samples the
/// workers' poll records: half the
/// long-poll threshold (so a long poll is measured to within half of it),
/// or the compensation threshold if that is lower; `None` when both are off.
///
/// Not half the compensation threshold: a stuck worker is then compensated
/// within twice the threshold rather than 1.5 times, but the monitor wakes
/// no more often than the long-poll detector alone makes it (every 5 ms by
/// default). Each wake-up on a saturated machine preempts a worker;
/// docs/decisions.md#stuck-workers gives what sampling twice as often cost
/// the background in `mixed_load`.
fn sample_interval(config: &crate::runtime::shared::SchedulerConfig) -> Option<Duration> {
    let long_poll = config.long_poll_threshold.map(|threshold| threshold / 2);
    match (long_poll, config.compensation_threshold) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Announces the tasks held back (`worker/spawned.rs`) by polls that have
/// run since the last sample without a yield point (the stretches in
/// `running`; a poll that reaches `yield_if_busy()` announces them
/// itself): opens every such worker's run-next slot to stealers, and
/// wakes a sleeping worker if one of them has a task waiting there or in
/// its deque. The slots are opened even with no worker idle: the
/// compensation that follows counts an open task as waiting work, and a
/// task in the slot of a worker blocked for good would otherwise wait for
/// ever. `notify_one` wakes nobody while a worker searches: a searcher
/// finds the task on its own.
fn announce_waiting_spawns(shared: &Shared, running: &[Running]) {
    let stealers = shared.active_stealers();
    let run_next = shared.active_run_next();
    // No short-circuit: every running stretch's slot is opened.
    let waits = running.iter().fold(false, |waits, stretch| {
        let opened = run_next.get(stretch.slot).is_some_and(|slot| slot.open());
        let queued = stealers
            .get(stretch.slot)
            .is_some_and(|stealer| !stealer.is_empty());
        waits | opened | queued
    });
    if waits && shared.idle.num_idle() > 0 {
        shared.idle.notify_one();
    }
}

struct Monitor {
    shared: Arc<Shared>,
    /// Cumulative scheduling-latency snapshots, one per tick, oldest first.
    window: VecDeque<LatencySnapshot>,
    window_len: usize,
    next_tick: Instant,
    detector: Option<LongPollDetector>,
    /// Tells blocked workers from runnable ones before they are compensated.
    judge: StuckJudge,
    /// D1: workers stacked on one CPU; `None` with `spread_workers(false)`
    /// or a single worker.
    spreader: Option<Spreader>,
    next_sample: Instant,
    /// The limit last reported in a debug event.
    reported_limit: f64,
    /// The CPU limit, read again at its ticks (`cpu_limit/`).
    cpu_limit: LimitReader,
    /// Whether the last sample found a stuck worker with no spare left (it
    /// is warned about once per such spell).
    warned_no_spare: bool,
}

impl Monitor {
    fn new(shared: Arc<Shared>, cpu_limit: LimitReader) -> Self {
        let config = shared.admission.config().clone();
        let window_len =
            (config.window.as_secs_f64() / config.sample_period.as_secs_f64()).round() as usize;
        let now = Instant::now();
        let detector = sample_interval(&shared.config).map(|interval| {
            LongPollDetector::new(
                shared.config.long_poll_threshold,
                interval,
                shared.stealers.len(),
            )
        });
        Monitor {
            reported_limit: config.min_utilization,
            cpu_limit,
            warned_no_spare: false,
            window: VecDeque::with_capacity(window_len + 1),
            window_len: window_len.max(1),
            next_tick: now + config.sample_period,
            next_sample: now
                + detector
                    .as_ref()
                    .map_or(Duration::MAX / 4, LongPollDetector::interval),
            detector,
            judge: StuckJudge::new(shared.stealers.len()),
            spreader: (shared.config.spread_workers && shared.num_workers() > 1)
                .then(Spreader::new),
            shared,
        }
    }

    fn run(mut self) {
        tracing::debug!(target: "brigade::runtime::monitor", "monitor thread started");
        let mut refill_at: Option<Instant> = None;
        loop {
            let wake_at = [Some(self.next_tick), Some(self.next_sample), refill_at]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(self.next_tick);
            let shared = &self.shared;
            let Some(admitted) = shared
                .admission
                .wait_and_admit(wake_at, || shared.is_shutdown())
            else {
                break;
            };
            let now = admitted.at;
            refill_at = admitted.refill_at;
            let admitted_count = admitted.tasks.len();
            for runnable in admitted.tasks {
                self.shared.push_injected(runnable);
            }
            self.shared.admission.handed_over(admitted_count);
            if now >= self.next_sample {
                self.sample(now);
            }
            if !self.shared.driver.has_worker_in_poll() && self.shared.idle.num_idle() > 0 {
                self.shared.idle.hand_off_driver();
            }
            if now >= self.next_tick {
                self.tick(now);
            }
        }
        tracing::debug!(target: "brigade::runtime::monitor", "monitor thread stopped");
    }

    fn sample(&mut self, now: Instant) {
        let Some(detector) = self.detector.as_mut() else {
            return;
        };
        let metrics = &self.shared.metrics;
        let detected = detector.check(metrics.workers().map(|worker| &worker.poll_record), now);
        metrics.count_long_polls(detected);
        self.next_sample = now + detector.interval();
        announce_waiting_spawns(&self.shared, detector.running());
        let compensation = &self.shared.compensation;
        let ended = compensation.end_stale_covers(|slot| metrics.worker(slot).poll_record.seq());
        for _ in 0..ended {
            self.shared.idle.notify_spare(compensation.first_spare());
        }
        if let Some(threshold) = self.shared.config.compensation_threshold {
            let shared = &self.shared;
            let short = decide::compensate(
                shared,
                detector.running(),
                threshold,
                &mut self.judge,
                now,
                &mut |reason| {
                    crate::runtime::scheduler::worker::spare_threads::start_spares(shared, reason)
                },
            );
            if short && !self.warned_no_spare {
                tracing::warn!(
                    target: "brigade::compensation",
                    max_spares = self.shared.compensation.max_spares(),
                    "a worker is stuck and every spare worker is already serving \
                     (`Builder::max_spare_workers`); it stays stuck without a stand-in"
                );
            }
            self.warned_no_spare = short;
        }
        if let Some(spreader) = self.spreader.as_mut() {
            spreader.sample(&self.shared, now);
        }
    }

    fn tick(&mut self, now: Instant) {
        self.cpu_limit.tick(&self.shared, now);
        let snapshot = self
            .shared
            .metrics
            .snapshot(|worker| &worker.scheduling_latency);
        if let Some(previous) = self.window.back() {
            let samples = snapshot.count() - previous.count();
            self.shared.sampler().adapt(samples, self.window_len);
        }
        self.window.push_back(snapshot);
        while self.window.len() > self.window_len + 1 {
            self.window.pop_front();
        }
        let (Some(oldest), Some(newest)) = (self.window.front(), self.window.back()) else {
            return;
        };
        let p99 = newest.since(oldest).quantile(0.99);
        // The window's last fifth (see `admission/controller.rs`).
        let recent_ticks = (self.window_len / 5).max(1);
        let recent_start = self.window.len().saturating_sub(recent_ticks + 1);
        let recent_p99 = newest.since(&self.window[recent_start]).quantile(0.99);
        let admission = &self.shared.admission;
        // Elastic admission's capacity: the CPU limit, at most the workers.
        let capacity = self.cpu_limit.capacity(self.shared.num_workers());
        let (limit, waiting) = admission.tick(p99, recent_p99, capacity);
        // Report moves of at least one percentage point since the last report.
        if (limit - self.reported_limit).abs() >= 0.01 {
            tracing::debug!(
                target: "brigade::runtime::monitor",
                limit = format_args!("{limit:.3}"),
                previous = format_args!("{:.3}", self.reported_limit),
                p99_us = p99.as_micros() as u64,
                recent_p99_us = recent_p99.as_micros() as u64,
                waiting,
                "elastic utilization limit changed"
            );
            self.reported_limit = limit;
        }
        let period = admission.config().sample_period;
        self.next_tick += period;
        if self.next_tick <= now {
            self.next_tick = now + period;
        }
    }
}
