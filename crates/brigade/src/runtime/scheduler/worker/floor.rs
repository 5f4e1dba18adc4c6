//! B2's second half in `policy.rs`, the background floor
//! ([`Builder::background_floor`](crate::Builder::background_floor)):
//! the smallest share of a worker's time that background work keeps while
//! it waits, however busy the foreground is.
//!
//! Without a floor, work in the yield queue (tasks that stepped aside in
//! `yield_if_busy()`, demoted background tasks) runs only when a worker has
//! nothing else to do, plus the starvation bound's rescues (at most 4%,
//! `yield_queue/rescue.rs`). Under a foreground that never lets up that is
//! the leftovers, by design. A floor `F` (0 < F ≤ 1) is a promise instead:
//! each worker gives background work at least `F` of its time while such
//! work waits.
//!
//! ## The account: a deficit per worker
//! Each worker keeps how much background time it owes ([`Floor`]), in
//! nanoseconds:
//! - **Accrues** at each of its epoch ticks (≈ 33 µs, `Core::next_task`'s
//!   epoch check, where the rescue is tried too): `F ×` the time since its
//!   previous tick, if background work waited meanwhile (the yield queue
//!   holds an entry now, or the worker ran a background poll since).
//! - **Pays**: every poll of a task this worker took out of the yield queue
//!   (`Core::take_back`: with nothing else to do, a rescue, or a floor
//!   turn), and every admitted elastic poll (`Core::poll_elastic`), is
//!   timed and its length taken off the debt.
//! - **Turns**: once the debt reaches [`FLOOR_SLICE`], the tick takes the
//!   head of its own shard of the yield queue (another's, under the
//!   queue's usual rules, if its own is empty) ahead of its own deque and
//!   gives the task a slice of
//!   [`FLOOR_SLICE`] (the rescue's `Slice`), during which its
//!   `yield_if_busy()` calls continue and its self-wakes do not step aside.
//! - The debt is clamped to `±`[`MAX_BALANCE`]: a worker that was idle (so
//!   background work ran for free) or had nothing to give (the background
//!   waited on I/O) neither banks credit nor debt for long, so the floor
//!   is a share over a few milliseconds, not over the runtime's life.
//!
//! Under a saturating foreground this alternates `FLOOR_SLICE` of
//! background with `FLOOR_SLICE × (1 − F) / F` of foreground on each
//! worker. A unit of background work longer than the slice runs whole (a
//! poll cannot be cut), and its length is paid off as the foreground runs.
//! Background time that the floor did not grant (idle take-backs, rescues)
//! counts too, so a worker with spare time never takes a floor turn.
//!
//! Elastic tasks (`spawn_elastic`) wait for admission's tokens, not in the
//! yield queue, once their grant is spent, and a floor turn cannot admit
//! them: the floor raises the elastic limit's minimum
//! ([`ElasticConfig::min_utilization`]) to `F` ([`with_floor`]), so the
//! controller never throttles them below it. Their admitted polls pay the
//! account like any background poll, so tokens and turns together give
//! about `F`, not `F` twice.
//!
//! ## Protocol
//! None across threads: the account is the worker's own (`Cell`s, only its
//! thread touches them), and a turn takes from the yield queue with the
//! queue's own pops (`YieldQueue::pop_for`), whose protocol and loom models
//! are the queue's. With no floor (the default) nothing here runs: the tick
//! is one branch, a take-back writes nothing, and a poll's end reads one
//! `Cell`; `yield_if_busy()`'s fast path is untouched.
//!
//! ## The trade-off
//! While a floor turn runs, the foreground on that worker waits up to one
//! slice, and the foreground keeps at most `1 − F` of a worker while
//! background work waits. With `F = 0.5` a request may wait
//! [`FLOOR_SLICE`] (250 µs) behind the background, and the foreground's
//! throughput under saturation is about halved.

use std::cell::Cell;

use super::Core;
use crate::admission::ElasticConfig;
use crate::policy::{FLOOR_MAX_BALANCE_SLICES, FLOOR_SLICE};
use crate::task::Runnable;

/// [`FLOOR_MAX_BALANCE_SLICES`] in nanoseconds.
const MAX_BALANCE: i64 = FLOOR_SLICE.as_nanos() as i64 * FLOOR_MAX_BALANCE_SLICES;

/// Checks a value for `Builder::background_floor`: a fraction in `[0, 1]`.
pub(crate) fn validate(floor: f64) -> Result<(), String> {
    if (0.0..=1.0).contains(&floor) {
        Ok(())
    } else {
        Err(format!("must be a fraction in [0, 1], got {floor}"))
    }
}

/// The elastic settings with the floor applied: the limit's minimum is
/// raised to `floor` (and the maximum, which `Builder::build` checks is at
/// least `floor`, stays). No floor: `config` unchanged.
pub(crate) fn with_floor(config: &ElasticConfig, floor: f64) -> ElasticConfig {
    let mut config = config.clone();
    if floor > config.min_utilization {
        config.min_utilization = floor;
    }
    config
}

/// One worker's background account (see the module docs). Only its
/// worker's thread touches it.
pub(crate) struct Floor {
    /// `F` in parts per 2^16; 0: no floor.
    share: u64,
    /// Background time owed, in nanoseconds (negative: credit).
    owed: Cell<i64>,
    /// The previous tick (runtime-clock ns).
    last_tick: Cell<u64>,
    /// When the running poll of a task taken from the yield queue started;
    /// `None` otherwise, and always with no floor.
    background_since: Cell<Option<u64>>,
    /// A background poll ended since the previous tick.
    ran_background: Cell<bool>,
}

impl Floor {
    /// `floor`: the validated `Builder::background_floor`.
    pub(crate) fn new(floor: f64) -> Self {
        Floor {
            share: (floor * 65536.0).round() as u64,
            owed: Cell::new(0),
            last_tick: Cell::new(0),
            background_since: Cell::new(None),
            ran_background: Cell::new(false),
        }
    }

    #[inline]
    pub(crate) fn is_on(&self) -> bool {
        self.share != 0
    }

    /// A task taken out of the yield queue, or an admitted elastic task, is
    /// about to be polled; its poll started at `now`.
    #[inline]
    pub(crate) fn background_poll_starts(&self, now: u64) {
        if self.is_on() {
            self.background_since.set(Some(now));
        }
    }

    /// A poll ended: if it was a background one, pays its length (`clock`
    /// is read only then).
    #[inline]
    pub(crate) fn poll_ended(&self, clock: impl FnOnce() -> u64) {
        if let Some(since) = self.background_since.take() {
            self.pay(clock().saturating_sub(since));
            self.ran_background.set(true);
        }
    }

    fn pay(&self, nanos: u64) {
        let nanos = i64::try_from(nanos).unwrap_or(i64::MAX);
        self.set_owed(self.owed.get().saturating_sub(nanos));
    }

    fn set_owed(&self, owed: i64) {
        self.owed.set(owed.clamp(-MAX_BALANCE, MAX_BALANCE));
    }

    /// A tick at `now`: accrues `F ×` the time since the previous tick if
    /// background work waited (`waiting`, or a background poll ran since);
    /// returns whether a turn is due.
    fn tick(&self, now: u64, waiting: bool) -> bool {
        let elapsed = now.saturating_sub(self.last_tick.replace(now));
        if waiting || self.ran_background.replace(false) {
            let accrued = (elapsed.min(MAX_BALANCE as u64) * self.share) >> 16;
            self.set_owed(self.owed.get().saturating_add(accrued as i64));
        }
        waiting && self.owed.get() >= FLOOR_SLICE.as_nanos() as i64
    }
}

impl Core {
    /// At the first tick of an epoch, after the rescue: a floor turn if one
    /// is due (see the module docs), the task to run now with its slice
    /// started.
    pub(super) fn floor_turn(&self) -> Option<Runnable> {
        if !self.floor.is_on() {
            return None;
        }
        let shared = self.shared();
        let now = shared.clock_nanos();
        if !self.floor.tick(now, !shared.yield_queue.is_empty()) {
            return None;
        }
        // Its own shard first, without the look at how long other shards'
        // heads have waited: each worker pays its own debt, and its own
        // background tasks are the ones whose data its cache holds.
        let waiting = shared.yield_queue.pop_for(self.index(), false, now)?;
        let runnable = self.take_back(waiting, now)?;
        let len = FLOOR_SLICE.as_nanos() as u64;
        self.turns
            .slice
            .start_for(runnable.metadata().id(), now, len);
        Some(runnable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;
    const SLICE: u64 = FLOOR_SLICE.as_nanos() as u64;

    #[test]
    fn a_turn_is_due_once_the_share_of_waiting_time_reaches_a_slice() {
        let floor = Floor::new(0.5);
        // 0.5 × 400 µs = 200 µs owed: not yet a slice.
        assert!(!floor.tick(400 * US, true));
        // 0.5 × 500 µs = 250 µs: due.
        assert!(floor.tick(500 * US, true));
        // Paying the slice ends the debt.
        floor.background_poll_starts(500 * US);
        floor.poll_ended(|| 500 * US + SLICE);
        assert!(!floor.tick(500 * US + SLICE, true));
    }

    #[test]
    fn nothing_accrues_while_no_background_work_waits() {
        let floor = Floor::new(1.0);
        assert!(!floor.tick(10_000 * US, false));
        assert!(!floor.tick(10_010 * US, true));
        assert_eq!(floor.owed.get(), 10_000);
    }

    #[test]
    fn debt_and_credit_are_clamped() {
        let floor = Floor::new(1.0);
        floor.tick(0, true);
        floor.tick(1_000_000 * US, true);
        assert_eq!(floor.owed.get(), MAX_BALANCE);
        floor.background_poll_starts(0);
        floor.poll_ended(|| 1_000_000 * US);
        assert_eq!(floor.owed.get(), -MAX_BALANCE);
    }

    #[test]
    fn off_takes_no_time_and_no_turn() {
        let floor = Floor::new(0.0);
        assert!(!floor.is_on());
        floor.background_poll_starts(0);
        floor.poll_ended(|| unreachable!("no clock read without a floor"));
        assert!(!floor.tick(u64::MAX / 2, true));
    }

    #[test]
    fn validation_and_the_elastic_minimum() {
        for good in [0.0, 0.25, 1.0] {
            assert!(validate(good).is_ok(), "{good}");
        }
        for bad in [f64::NAN, -0.1, 1.5, f64::INFINITY] {
            assert!(validate(bad).is_err(), "{bad}");
        }
        let config = ElasticConfig::default();
        assert_eq!(with_floor(&config, 0.0), config);
        assert_eq!(with_floor(&config, 0.5).min_utilization, 0.5);
    }
}
