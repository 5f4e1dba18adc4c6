//! The starvation bound of the yield queue.
//!
//! The yield queue runs only when nothing else waits (`mod.rs`), so
//! under a flood of foreground work that never lets up, yielded background
//! work would wait for ever. The bound:
//!
//! 1. **Overdue.** The queue is *overdue* when its head has waited longer
//!    than `max_yield_delay` ([`DEFAULT_MAX_YIELD_DELAY`](crate::policy::DEFAULT_MAX_YIELD_DELAY), 50 ms, by
//!    default) and no worker has taken an entry out the usual way (having
//!    nothing else to do) for as long. A queue that is served now and then
//!    is not overdue, however long it is: its entries wait their turn, and
//!    the foreground is not taxed for them. A worker looks once per ≈ 33 µs
//!    epoch (at its periodic driver poll, `runtime/scheduler/worker/mod.rs`); when the
//!    queue is overdue, it takes the head out ahead of its own deque: a
//!    *rescue* (`Core::rescue_overdue`, `runtime/scheduler/worker/yielded.rs`).
//!
//!    The same test, in `yield_if_busy()`'s amortised checks
//!    (`runtime/scheduler/worker/step_aside.rs`), makes a yielder that keeps going
//!    while others wait in the queue step aside for them: without it,
//!    yielders that never need to give way to foreground work never let
//!    queued yielders run either.
//! 2. **A slice.** The rescued task then runs as if nothing waited for
//!    [`RESCUE_SLICE`] (250 µs): its `yield_if_busy()` calls continue, and
//!    its self-wakes do not step aside, until the slice ends. One poll per
//!    rescue would not be enough: a task with 50 µs units would get 50 µs
//!    every `max_yield_delay`, 0.1% of a worker. A longer slice is a longer
//!    stall for the requests queued behind it on that worker.
//! 3. **Starving goes on.** Once a rescue was needed, the queue stays
//!    *starving* until a worker takes an entry out the usual way: the next
//!    rescue comes as soon as the rate limit allows, not after its head has
//!    waited another `max_yield_delay`. Without this, a lone background
//!    task, which goes back to the queue when its slice ends, would get one
//!    slice per `max_yield_delay`, and its share would shrink with the
//!    slice; with it, short slices add up to the same share.
//! 4. **A rate limit.** Rescues, runtime-wide, are at least
//!    `RESCUE_SLICE / (RESCUE_SHARE_PERCENT % × workers)` apart, so however
//!    many tasks starve, rescued work takes at most
//!    [`RESCUE_SHARE_PERCENT`] (4%) of the workers, and foreground work
//!    keeps at least 96% of them.
//!
//! Under a flood, then, the first rescue comes once the head has waited
//! `max_yield_delay`; after it, starving work gets 4% of the workers in
//! 250 µs slices (one every 6.25 ms on one worker), shared among the
//! starving tasks in queue order: each waits about n × 250 µs / 4% of the
//! workers. The bound on the delay holds for a few tasks, the bound on the
//! share always. What the bound gives under a flood (the background's
//! share, the longest yield delay, the foreground's rate) is measured by
//! `examples/flood.rs`; the figures are in docs/results.md#flood, not here,
//! because they depend on the machine and change with every re-measurement.
//!
//! The trade-off: while rescued work runs, the foreground on that worker
//! waits up to one slice. That happens only once the yield queue has
//! starved for `max_yield_delay`, that is, when the runtime is overloaded;
//! a runtime that serves its foreground and still has spare time never
//! rescues anything, and its foreground latency does not change. A shorter
//! `max_yield_delay` rescues sooner under overload and so takes a slice
//! from the foreground more often, up to the 4% cap.
//!
//! ## Protocol
//! `next_at` is claimed with a compare-exchange: of the workers that see
//! the queue overdue in the same window, one wins and the others go on as
//! usual; the winner then stores `rescued_at`. The head's age
//! (`YieldQueue::head_at`), `served_at` and `rescued_at` are hints (a
//! stale one moves a rescue by at most an epoch or one interval):
//! the winner pops whatever the head is by then, and the slice is the
//! winning worker's own ([`Slice`]). Nothing else depends on the outcome,
//! so every access is `Relaxed`; statistics-style words, hence `std`
//! atomics.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::epoch::epoch_start;

use crate::policy::{RESCUE_SHARE_PERCENT, RESCUE_SLICE};

/// The runtime-wide rescue state.
pub(crate) struct YieldRescue {
    /// `max_yield_delay` in nanoseconds; `u64::MAX` when off.
    max_delay: u64,
    /// The least time between two rescues, in nanoseconds.
    interval: u64,
    /// No rescue before this runtime-clock time.
    next_at: AtomicU64,
    /// When a worker last took an entry out the usual way, having nothing
    /// else to do (runtime-clock ns).
    served_at: AtomicU64,
    /// When the last rescue was claimed (runtime-clock ns); 0 before the
    /// first. Later than `served_at`: the queue is still starving.
    rescued_at: AtomicU64,
    /// How many rescues there were (statistics).
    rescues: AtomicU64,
}

impl YieldRescue {
    pub(crate) fn new(max_delay: Option<Duration>, num_workers: usize) -> Self {
        let slice = RESCUE_SLICE.as_nanos() as u64;
        YieldRescue {
            max_delay: max_delay.map_or(u64::MAX, |delay| delay.as_nanos() as u64),
            interval: slice * 100 / (RESCUE_SHARE_PERCENT * num_workers.max(1) as u64),
            next_at: AtomicU64::new(0),
            served_at: AtomicU64::new(0),
            rescued_at: AtomicU64::new(0),
            rescues: AtomicU64::new(0),
        }
    }

    /// Whether the queue, whose head went in at `head_at`, is overdue at
    /// `now`: neither the head went in nor any entry was served for
    /// `max_yield_delay`.
    pub(crate) fn is_overdue(&self, head_at: u64, now: u64) -> bool {
        let served_at = self.served_at.load(Ordering::Relaxed);
        now.saturating_sub(head_at.max(served_at)) >= self.max_delay
    }

    /// A worker took an entry out the usual way at `now`.
    ///
    /// Stored at most once per epoch (`epoch.rs`): every worker that serves
    /// the queue calls this at every take-back, and a store each time moved
    /// this shared cache line between their cores once per round trip
    /// through the queue (`yield_heavy`, 2 workers). A load of a line that
    /// is rarely written stays in every core's cache. The overdue test then
    /// reads a served time up to an epoch (≈ 33 µs) old, so a rescue may
    /// come that much sooner than `max_yield_delay`, never later.
    pub(crate) fn note_served(&self, now: u64) {
        if self.max_delay != u64::MAX
            && now
                >= self
                    .served_at
                    .load(Ordering::Relaxed)
                    .saturating_add(epoch_start(1))
        {
            self.served_at.store(now, Ordering::Relaxed);
        }
    }

    /// Whether a rescue was claimed within `max_yield_delay` of `now` and
    /// no entry was served the usual way since: the queue is still starving
    /// (module docs, 3). A queue that emptied and filled again long after
    /// its last rescue starts over.
    fn is_still_starving(&self, now: u64) -> bool {
        let rescued_at = self.rescued_at.load(Ordering::Relaxed);
        rescued_at != 0
            && rescued_at > self.served_at.load(Ordering::Relaxed)
            && now.saturating_sub(rescued_at) < self.max_delay
    }

    /// Whether the queue needs a rescue (it is overdue, see
    /// [`is_overdue`](Self::is_overdue), or still starving) and this caller
    /// won the right to rescue its head now (see the module docs).
    pub(crate) fn try_claim(&self, head_at: u64, now: u64) -> bool {
        if !self.is_overdue(head_at, now) && !self.is_still_starving(now) {
            return false;
        }
        let next_at = self.next_at.load(Ordering::Relaxed);
        if now < next_at {
            return false;
        }
        let claimed = self
            .next_at
            .compare_exchange(
                next_at,
                now + self.interval,
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok();
        if claimed {
            self.rescued_at.store(now.max(1), Ordering::Relaxed);
            self.rescues.fetch_add(1, Ordering::Relaxed);
        }
        claimed
    }

    /// How many tasks were rescued since the runtime started.
    pub(crate) fn rescues(&self) -> u64 {
        self.rescues.load(Ordering::Relaxed)
    }
}

/// One worker's current slice: which task runs as if nothing waited, until
/// when. Only its worker's thread touches it.
pub(crate) struct Slice {
    /// The task's id, or 0 (task ids start at 1).
    task: Cell<u64>,
    /// Runtime-clock nanoseconds.
    until: Cell<u64>,
}

impl Slice {
    pub(crate) fn new() -> Self {
        Slice {
            task: Cell::new(0),
            until: Cell::new(0),
        }
    }

    /// Gives `task` a slice from `now`.
    pub(crate) fn start(&self, task: u64, now: u64) {
        self.start_for(task, now, RESCUE_SLICE.as_nanos() as u64);
    }

    /// Gives `task` a slice of `len` nanoseconds from `now` (a turn of the
    /// background floor: `runtime/scheduler/worker/floor.rs`).
    pub(crate) fn start_for(&self, task: u64, now: u64, len: u64) {
        self.task.set(task);
        self.until.set(now.saturating_add(len));
    }

    /// Whether `task` holds the slice; `now` is read only if it does. An
    /// expired slice is ended.
    #[inline]
    pub(crate) fn holds(&self, task: u64, now: impl FnOnce() -> u64) -> bool {
        if self.task.get() != task {
            return false;
        }
        if now() < self.until.get() {
            return true;
        }
        self.task.set(0);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// The least time between two rescues with two workers:
    /// 250 µs / (4% of 2 workers).
    const INTERVAL: u64 = 3_125_000;

    #[test]
    fn only_an_overdue_head_is_rescued_and_rescues_are_spaced() {
        let rescue = YieldRescue::new(Some(Duration::from_millis(50)), 2);
        assert_eq!(rescue.interval, INTERVAL);
        assert!(!rescue.try_claim(10 * MS, 59 * MS));
        assert!(rescue.try_claim(10 * MS, 60 * MS));
        assert!(!rescue.try_claim(10 * MS, 60 * MS + INTERVAL - 1));
        assert!(rescue.try_claim(10 * MS, 60 * MS + INTERVAL));
        assert_eq!(rescue.rescues(), 2);
    }

    #[test]
    fn a_queue_starving_after_a_rescue_is_rescued_again_at_the_rate_limit() {
        let rescue = YieldRescue::new(Some(Duration::from_millis(50)), 2);
        assert!(rescue.try_claim(10 * MS, 60 * MS));
        // The rescued task went back to the queue when its slice ended: a
        // head that has hardly waited, yet still starving.
        let back_at = 60 * MS + MS / 4;
        assert!(!rescue.is_overdue(back_at, 60 * MS + INTERVAL));
        assert!(rescue.try_claim(back_at, 60 * MS + INTERVAL));
        // Served the usual way: no longer starving, so the next head waits
        // the whole `max_yield_delay` again.
        let served_at = 60 * MS + INTERVAL + MS;
        rescue.note_served(served_at);
        assert!(!rescue.try_claim(served_at, served_at + INTERVAL));
        assert!(!rescue.try_claim(served_at, served_at + 50 * MS - 1));
        assert!(rescue.try_claim(served_at, served_at + 50 * MS));
    }

    #[test]
    fn a_queue_that_fills_again_long_after_its_last_rescue_starts_over() {
        let rescue = YieldRescue::new(Some(Duration::from_millis(50)), 2);
        assert!(rescue.try_claim(10 * MS, 60 * MS));
        // The queue emptied; an entry comes 100 ms later and nobody served
        // anything meanwhile: it waits its `max_yield_delay` first.
        assert!(!rescue.try_claim(160 * MS, 160 * MS + INTERVAL));
        assert!(rescue.try_claim(160 * MS, 210 * MS));
    }

    #[test]
    fn a_queue_served_now_and_then_is_not_overdue() {
        let rescue = YieldRescue::new(Some(Duration::from_millis(50)), 2);
        rescue.note_served(40 * MS);
        assert!(!rescue.is_overdue(10 * MS, 89 * MS));
        assert!(!rescue.try_claim(10 * MS, 89 * MS));
        assert!(rescue.is_overdue(10 * MS, 90 * MS));
    }

    #[test]
    fn the_served_time_moves_on_at_most_once_per_epoch() {
        let rescue = YieldRescue::new(Some(Duration::from_millis(50)), 2);
        rescue.note_served(40 * MS);
        rescue.note_served(40 * MS + epoch_start(1) - 1);
        // Still 40 ms: overdue 50 ms later.
        assert!(rescue.is_overdue(10 * MS, 90 * MS));
        rescue.note_served(40 * MS + epoch_start(1));
        assert!(!rescue.is_overdue(10 * MS, 90 * MS));
    }

    #[test]
    fn off_means_never() {
        let rescue = YieldRescue::new(None, 2);
        assert!(!rescue.try_claim(0, u64::MAX - 1));
    }

    #[test]
    fn a_slice_holds_for_its_task_until_it_ends() {
        let slice = Slice::new();
        slice.start(7, 100);
        let len = RESCUE_SLICE.as_nanos() as u64;
        assert!(slice.holds(7, || 100 + len - 1));
        assert!(!slice.holds(8, || unreachable!("the clock is read for the holder only")));
        assert!(!slice.holds(7, || 100 + len));
        // Ended for good.
        assert!(!slice.holds(7, || 0));
    }
}
