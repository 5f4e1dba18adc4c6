//! The monitor thread: a small thread that keeps ticking while every worker
//! is busy. It
//! - ticks elastic admission's controller every `sample_period`
//!   ([`Admission::tick`]), feeding it the p99 scheduling latency over the
//!   last `window` (the difference between the newest and the oldest of a
//!   ring of cumulative snapshots);
//! - admits elastic tasks waiting in the admission queue as soon as the
//!   token bucket has tokens again (or, for coarse tasks, a coarse slot is
//!   free);
//! - samples the workers' poll watches for the long-poll detector, and
//!   covers workers stuck past the compensation threshold while work waits
//!   and no worker is idle, starting spare workers for them
//!   (`compensation/`, `spare.rs`), unless the kernel says a spare cannot
//!   help: the worker is runnable, waiting for a CPU or computing on a host
//!   with no idle CPU (`compensation/judge.rs`);
//! - hands the driver on when workers sleep but none sleeps in the driver
//!   (`Idle::hand_off_driver`), at every wake-up: the worker that slept in
//!   it may have left to run a task that never returns to the scheduler (a
//!   `yield_if_busy()` loop, which sees a worker idle and so never polls
//!   I/O and timers itself), and without this nobody would poll them. Doing
//!   it here keeps the wake-up off the path of every request (a worker
//!   that leaves the driver for a short task comes back to it itself); the
//!   price is that I/O and timers can wait one monitor period (see
//!   [`watch_interval`]; else the controller's tick) in that case;
//! - keeps the scheduling-latency sampling dense enough for a p99: one
//!   schedule in `latency_sample_every` is plenty on a busy runtime, but at
//!   a thousand schedules a second it would leave the controller a few dozen
//!   samples per window, whose "p99" is really their maximum. So each tick it
//!   estimates the schedule rate (samples × interval) and picks the sparsest
//!   interval that still yields [`SAMPLES_PER_WINDOW`] samples per window.
//!   Dense sampling happens only when schedules are rare, so its cost stays
//!   at about `SAMPLES_PER_WINDOW` clock-read triples per window.
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

use super::Shared;
use super::compensation::MonitorCover;
use super::compensation::judge::{StuckJudge, Verdict};
use crate::metrics::LatencySnapshot;
use crate::metrics::long_poll::{LongPollDetector, Running};

/// Starts the monitor thread.
pub(crate) fn start(
    shared: Arc<Shared>,
    name: String,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name(name)
        .spawn(move || Monitor::new(shared).run())
}

/// How often the monitor samples the workers' poll watches: half the
/// long-poll threshold (so a long poll is measured to within half of it),
/// or the compensation threshold if that is lower; `None` when both are off.
///
/// Not half the compensation threshold: a stuck worker is then compensated
/// within twice the threshold rather than 1.5 times, but the monitor wakes
/// no more often than the long-poll detector alone makes it (every 5 ms by
/// default). Each wake-up on a saturated machine preempts a worker; the
/// README's "Stuck workers" section gives what sampling twice as often cost
/// the background in `mixed_load`.
fn watch_interval(config: &super::shared::SchedulerConfig) -> Option<Duration> {
    let long_poll = config.long_poll_threshold.map(|threshold| threshold / 2);
    match (long_poll, config.compensation_threshold) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Covers every slot stuck in one stretch for at least `threshold`, while
/// work waits and no worker is idle to take it, and starts spares for them
/// (see `runtime/compensation/`). Also retries starting spares that covered slots
/// still lack (a thread that could not be started). Returns whether a slot
/// needed a spare but every spare was serving already.
fn compensate(
    shared: &Arc<Shared>,
    running: &[Running],
    threshold: Duration,
    judge: &mut StuckJudge,
    now: Instant,
) -> bool {
    let compensation = &shared.compensation;
    let mut polled_driver = false;
    for stretch in running {
        if stretch.ran_for < threshold {
            break; // `running` is longest first
        }
        if compensation.is_covered(stretch.slot) || shared.idle.num_idle() > 0 {
            continue;
        }
        if !shared.has_waiting_work() && !polled_driver {
            // Work can wait unseen: with every worker busy nobody sleeps in
            // the driver, so a request on a readable socket or a due timer
            // queues no task until someone polls. Poll once, without
            // blocking, before deciding that nothing waits (the tasks it
            // wakes go to the injector, for the spare to run).
            polled_driver = true;
            if !shared.driver.has_worker_in_poll() {
                shared.driver.poll_nonblocking();
            }
        }
        if !shared.has_waiting_work() || !spare_helps(shared, judge, stretch, now) {
            continue;
        }
        if compensation.serving() >= compensation.max_spares() {
            return compensation.max_spares() > 0;
        }
        let cpu = compensation.clock(stretch.slot).read();
        let watch = &shared.metrics.worker(stretch.slot).watch;
        let covered = compensation.cover_running(
            stretch.slot,
            stretch.seq,
            || watch.seq(),
            shared.clock_nanos(),
            cpu,
        );
        match covered {
            MonitorCover::Covered => {
                tracing::info!(
                    target: "brigade::compensation",
                    worker = stretch.slot,
                    spawned_at = %stretch.location,
                    stuck_ms = stretch.ran_for.as_millis() as u64,
                    "worker {} has been stuck for {:.0?} in a task spawned at {}; a spare \
                     worker takes its place",
                    stretch.slot,
                    stretch.ran_for,
                    stretch.location
                );
                let reason = format_args!("worker {} is stuck", stretch.slot);
                super::spare::start_spares(shared, &reason);
            }
            MonitorCover::TakenBack => shared.idle.notify_spare(compensation.first_spare()),
            MonitorCover::Taken => {}
        }
    }
    // A spare whose thread could not start is retried here.
    if compensation.lacks_spares() {
        super::spare::start_spares(shared, &"a covered worker still lacks a spare");
    }
    false
}

/// Whether a spare can help the worker stuck in `stretch`: not when its
/// thread is runnable, waiting for a CPU or running on a host with no idle
/// CPU (the rule is on [`StuckJudge`]). Reports the stretches it leaves
/// uncompensated, once per stretch and verdict.
fn spare_helps(shared: &Shared, judge: &mut StuckJudge, stretch: &Running, now: Instant) -> bool {
    let clock = shared.compensation.clock(stretch.slot);
    let (verdict, news) = judge.judge(stretch.slot, stretch.seq, clock, now);
    if news {
        let stuck_ms = stretch.ran_for.as_millis() as u64;
        match verdict {
            Verdict::Descheduled => {
                shared.metrics.count_descheduled();
                tracing::debug!(
                    target: "brigade::compensation",
                    worker = stretch.slot,
                    spawned_at = %stretch.location,
                    stuck_ms,
                    "worker {} is runnable but waiting for a CPU (descheduled, not compensated)",
                    stretch.slot,
                );
            }
            Verdict::CpuBoundHostFull => tracing::debug!(
                target: "brigade::compensation",
                worker = stretch.slot,
                spawned_at = %stretch.location,
                stuck_ms,
                "worker {} runs a CPU-bound stretch and the host has no idle CPU \
                 (a long poll, not compensated)",
                stretch.slot,
            ),
            _ => {}
        }
    }
    verdict.compensates()
}

/// Samples the controller's p99 should rest on: 20 above the p99 per window.
const SAMPLES_PER_WINDOW: u64 = 2000;

struct Monitor {
    shared: Arc<Shared>,
    /// Cumulative scheduling-latency snapshots, one per tick, oldest first.
    window: VecDeque<LatencySnapshot>,
    window_len: usize,
    next_tick: Instant,
    detector: Option<LongPollDetector>,
    /// Tells blocked workers from runnable ones before they are compensated.
    judge: StuckJudge,
    next_watch: Instant,
    /// The limit last reported in a debug event.
    reported_limit: f64,
    /// Whether the last watch found a stuck worker with no spare left (it
    /// is warned about once per such spell).
    warned_no_spare: bool,
}

impl Monitor {
    fn new(shared: Arc<Shared>) -> Self {
        let config = shared.admission.config().clone();
        let window_len =
            (config.window.as_secs_f64() / config.sample_period.as_secs_f64()).round() as usize;
        let now = Instant::now();
        let detector = watch_interval(&shared.config).map(|interval| {
            LongPollDetector::new(
                shared.config.long_poll_threshold,
                interval,
                shared.stealers.len(),
            )
        });
        Monitor {
            reported_limit: config.min_utilization,
            warned_no_spare: false,
            window: VecDeque::with_capacity(window_len + 1),
            window_len: window_len.max(1),
            next_tick: now + config.sample_period,
            next_watch: now
                + detector
                    .as_ref()
                    .map_or(Duration::MAX / 4, LongPollDetector::interval),
            detector,
            judge: StuckJudge::new(shared.stealers.len()),
            shared,
        }
    }

    fn run(mut self) {
        tracing::debug!("monitor thread started");
        let mut refill_at: Option<Instant> = None;
        loop {
            let wake_at = [Some(self.next_tick), Some(self.next_watch), refill_at]
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
            for runnable in admitted.tasks {
                self.shared.push_injected(runnable);
            }
            if now >= self.next_watch {
                self.watch(now);
            }
            if !self.shared.driver.has_worker_in_poll() && self.shared.idle.num_idle() > 0 {
                self.shared.idle.hand_off_driver();
            }
            if now >= self.next_tick {
                self.tick(now);
            }
        }
        tracing::debug!("monitor thread stopped");
    }

    fn watch(&mut self, now: Instant) {
        let Some(detector) = self.detector.as_mut() else {
            return;
        };
        let metrics = &self.shared.metrics;
        let detected = detector.check(metrics.workers().map(|worker| &worker.watch), now);
        metrics.count_long_polls(detected);
        self.next_watch = now + detector.interval();
        let compensation = &self.shared.compensation;
        let ended = compensation.end_stale_covers(|slot| metrics.worker(slot).watch.seq());
        for _ in 0..ended {
            self.shared.idle.notify_spare(compensation.first_spare());
        }
        if let Some(threshold) = self.shared.config.compensation_threshold {
            let short = compensate(
                &self.shared,
                detector.running(),
                threshold,
                &mut self.judge,
                now,
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
    }

    /// Picks the sampling interval from the samples taken in the last tick.
    fn adapt_sampling(&self, samples: u64) {
        let every = u64::from(self.shared.sample_every());
        if every == 0 {
            return;
        }
        let schedules = samples * every;
        let wanted = SAMPLES_PER_WINDOW.div_ceil(self.window_len as u64);
        let every = (schedules / wanted).clamp(1, u64::from(u32::MAX)) as u32;
        self.shared.set_sample_every(every);
    }

    fn tick(&mut self, now: Instant) {
        let snapshot = self
            .shared
            .metrics
            .snapshot(|worker| &worker.scheduling_latency);
        if let Some(previous) = self.window.back() {
            self.adapt_sampling(snapshot.count() - previous.count());
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
        let (limit, waiting) = admission.tick(p99, recent_p99, self.shared.num_workers());
        // Report moves of at least one percentage point since the last report.
        if (limit - self.reported_limit).abs() >= 0.01 {
            tracing::debug!(
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
