//! The counters one worker writes ([`WorkerCounters`]) and its busy clock
//! ([`BusyClock`]), read by `RuntimeMetrics`'s per-worker figures
//! (`metrics/per_worker.rs`) and summed for the runtime's totals.

use std::sync::atomic::{AtomicU64, Ordering};

use super::Histogram;
use super::long_poll::PollRecord;

/// Counters one worker writes. Each has a single writer (its worker thread),
/// so increments are a `Relaxed` load and store, not a locked RMW; readers
/// may see a slightly stale value. Each worker's set sits on cache lines of
/// its own (`MetricsCells` pads it), so no other worker writes there.
/// Statistics only: no protocol reads them, hence `std` atomics.
pub(crate) struct WorkerCounters {
    pub(super) polls: AtomicU64,
    /// Tasks spawned on this worker's thread (the rest: `MetricsCells`).
    pub(super) spawns: AtomicU64,
    pub(super) yields: AtomicU64,
    /// Polls the cooperative budget made yield (`task/coop.rs`).
    pub(super) budget_forced_yields: AtomicU64,
    /// Successful steal operations from another worker (one per batch).
    pub(super) steals: AtomicU64,
    /// Tasks those steals took (the one run at once and the batch behind).
    pub(super) stolen_tasks: AtomicU64,
    pub(super) parks: AtomicU64,
    /// Bumped as the worker parks and as it unparks: odd while parked.
    pub(super) park_unparks: AtomicU64,
    /// Unparks after which the worker parked again without a poll.
    pub(super) noops: AtomicU64,
    /// Tasks this worker pushed into its own deque or run-next slot.
    pub(super) local_schedules: AtomicU64,
    /// Time spent outside parks.
    pub(crate) busy: BusyClock,
    /// Runnable → poll start, for sampled schedules.
    pub(crate) scheduling_latency: Histogram,
    /// Poll durations, for sampled polls.
    pub(crate) poll_duration: Histogram,
    /// Time waited in the yield queue.
    pub(crate) yield_delay: Histogram,
    /// What this worker is polling, for the long-poll detector.
    pub(crate) poll_record: PollRecord,
}

impl Default for WorkerCounters {
    fn default() -> Self {
        WorkerCounters {
            polls: AtomicU64::new(0),
            spawns: AtomicU64::new(0),
            yields: AtomicU64::new(0),
            budget_forced_yields: AtomicU64::new(0),
            steals: AtomicU64::new(0),
            stolen_tasks: AtomicU64::new(0),
            parks: AtomicU64::new(0),
            park_unparks: AtomicU64::new(0),
            noops: AtomicU64::new(0),
            local_schedules: AtomicU64::new(0),
            busy: BusyClock::new(),
            scheduling_latency: Histogram::new(),
            poll_duration: Histogram::new(),
            yield_delay: Histogram::new(),
            poll_record: PollRecord::default(),
        }
    }
}

fn bump_by(counter: &AtomicU64, by: u64) {
    counter.store(counter.load(Ordering::Relaxed) + by, Ordering::Relaxed);
}

fn bump(counter: &AtomicU64) {
    bump_by(counter, 1);
}

impl WorkerCounters {
    pub(crate) fn count_poll(&self) {
        bump(&self.polls);
    }
    /// A task spawned on this worker's thread.
    pub(crate) fn count_spawn(&self) {
        bump(&self.spawns);
    }
    pub(crate) fn count_yield(&self) {
        bump(&self.yields);
    }
    pub(crate) fn count_budget_forced_yield(&self) {
        bump(&self.budget_forced_yields);
    }
    /// One steal that took `tasks` tasks.
    pub(crate) fn count_steal(&self, tasks: u64) {
        bump(&self.steals);
        bump_by(&self.stolen_tasks, tasks);
    }
    /// A task pushed into this worker's own deque or run-next slot.
    #[inline]
    pub(crate) fn count_local_schedule(&self) {
        bump(&self.local_schedules);
    }

    /// The worker goes to park at `now` (the runtime's clock); `noop`: it
    /// polled nothing since it last unparked.
    pub(crate) fn count_park(&self, now: u64, noop: bool) {
        bump(&self.parks);
        bump(&self.park_unparks);
        if noop {
            bump(&self.noops);
        }
        self.busy.stop(now);
    }

    /// The worker is back from a park at `now`.
    pub(crate) fn count_unpark(&self, now: u64) {
        bump(&self.park_unparks);
        self.busy.start(now);
    }

    /// Polls so far: a worker reads its own to tell a no-op unpark.
    pub(crate) fn polls(&self) -> u64 {
        self.polls.load(Ordering::Relaxed)
    }
}

/// A worker's busy time, in one word so that a reader never sees half an
/// update: while the worker runs, the word is the instant (on the
/// runtime's clock, `Shared::clock_nanos`) at which it would have started
/// had it never parked, so the busy time is `now - word`; while it is
/// parked (or has not started, or has stopped), the word is [`PARKED`]
/// plus the busy time so far. The worker writes it only as it starts,
/// parks, unparks and stops, with clock reads those slow paths make
/// anyway: nothing on the path of a poll.
pub(crate) struct BusyClock {
    word: AtomicU64,
}

/// The flag of a parked worker's word (nanoseconds never reach it: 292 years).
const PARKED: u64 = 1 << 63;

impl BusyClock {
    fn new() -> Self {
        BusyClock {
            word: AtomicU64::new(PARKED),
        }
    }

    /// The worker runs from `now` on (its start, or its unpark).
    pub(crate) fn start(&self, now: u64) {
        let word = self.word.load(Ordering::Relaxed);
        if word & PARKED != 0 {
            let busy = word & !PARKED;
            self.word.store(now.saturating_sub(busy), Ordering::Relaxed);
        }
    }

    /// The worker stops running at `now` (it parks, or its loop ends).
    pub(crate) fn stop(&self, now: u64) {
        let word = self.word.load(Ordering::Relaxed);
        if word & PARKED == 0 {
            let busy = now.saturating_sub(word);
            self.word.store(PARKED | busy, Ordering::Relaxed);
        }
    }

    /// Busy nanoseconds as of `now`.
    pub(super) fn busy_nanos(&self, now: u64) -> u64 {
        let word = self.word.load(Ordering::Relaxed);
        if word & PARKED != 0 {
            word & !PARKED
        } else {
            now.saturating_sub(word)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BusyClock;

    #[test]
    fn busy_time_leaves_out_the_parks() {
        let clock = BusyClock::new();
        assert_eq!(clock.busy_nanos(5), 0);
        clock.start(10);
        assert_eq!(clock.busy_nanos(15), 5);
        clock.stop(20);
        assert_eq!(clock.busy_nanos(100), 10);
        clock.start(100);
        assert_eq!(clock.busy_nanos(130), 40);
        // A second start or stop in a row changes nothing.
        clock.start(120);
        clock.stop(140);
        clock.stop(150);
        assert_eq!(clock.busy_nanos(200), 50);
    }
}
