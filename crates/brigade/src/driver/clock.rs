//! The runtime's clock for timers and `brigade::time::Instant::now()`:
//! the system's monotonic clock, which a test can pause, advance and resume
//! (`brigade::time::{pause, advance, resume}`), and the holds that keep the
//! runtime from advancing a paused clock by itself.
//!
//! ## Reading the clock
//! Until the clock is first paused, `now` is `std::time::Instant::now()`
//! after one relaxed load of `controlled`. From then on it is
//! `base + (time since unfrozen)` read under `state`'s lock: `base` is the
//! clock's value when it was last frozen, moved on by every advance, and
//! `unfrozen` the system time it was resumed at (`None` while paused). So
//! the clock never goes back, and after `resume` it runs on from where the
//! paused clock stood, as tokio's does.
//!
//! ## Holds: who may stop an auto-advance
//! While the clock is paused and the runtime has nothing to do, the worker
//! that watches the driver moves the clock to the next timer
//! (`runtime/scheduler/auto_advance.rs` has that protocol). Work that the scheduler's
//! queues and idle counts cannot see takes a *hold* for as long as it may
//! still make a task runnable: a `spawn_blocking` closure from its queueing
//! until its `JoinHandle`'s waker has been woken, a `block_on` thread while
//! it polls or has a wake-up pending, a spare worker handing its tasks
//! back. `holds` packs the number of holds (low 32 bits) with the number of
//! holds ever taken (high 32 bits, wrapping), so the decider reads both in
//! one load, before and after its look at the queues: a hold taken in
//! between changes the word even if it was released again, and the decider
//! gives up. A hold is released only after whatever it made runnable is in
//! a queue, so a decider that sees no hold sees that work.
//!
//! Every hold operation is `SeqCst`, like the idle protocol it completes.
//! The hand-off of a hold from a waker to a `block_on` thread
//! (`runtime/mod.rs`, `ThreadSignal`) is model-checked below.
//!
//! Under loom only the holds are used: models have no timers, so the
//! clock's time is never read there.
#![cfg_attr(loom, allow(dead_code))]

use std::time::{Duration, Instant};

use crate::sync::{AtomicBool, AtomicU64, Mutex, Ordering, lock};

/// One hold in [`Clock::holds`]: the count and the number ever taken.
const ONE_HOLD: u64 = 1 | (1 << 32);
/// The count of holds in [`Clock::holds`].
const COUNT_MASK: u64 = (1 << 32) - 1;

/// Misuse of the clock controls, for their panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClockError {
    /// `pause` while paused.
    AlreadyPaused,
    /// `resume` or `advance` while running.
    NotPaused,
}

struct ClockState {
    base: Instant,
    /// When the clock last started running; `None` while paused.
    unfrozen: Option<Instant>,
}

/// See the module docs.
pub(crate) struct Clock {
    /// Set once, by the first pause: from then on `now` reads `state`.
    controlled: AtomicBool,
    /// Mirrors `state.unfrozen.is_none()`, for lock-free readers.
    paused: AtomicBool,
    state: Mutex<ClockState>,
    /// See "Holds" in the module docs.
    holds: AtomicU64,
}

impl Clock {
    /// A running clock whose time is `now` to begin with.
    pub(crate) fn new(now: Instant) -> Self {
        Clock {
            controlled: AtomicBool::new(false),
            paused: AtomicBool::new(false),
            state: Mutex::new(ClockState {
                base: now,
                unfrozen: Some(now),
            }),
            holds: AtomicU64::new(0),
        }
    }

    /// The clock's time now.
    pub(crate) fn now(&self) -> Instant {
        if !self.controlled.load(Ordering::Acquire) {
            return Instant::now();
        }
        let state = lock(&self.state);
        match state.unfrozen {
            Some(since) => state.base + since.elapsed(),
            None => state.base,
        }
    }

    /// Whether the clock is paused (a hint outside the lock).
    pub(crate) fn is_paused(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }

    /// Freezes the clock at its current time.
    pub(crate) fn pause(&self) -> Result<(), ClockError> {
        let mut state = lock(&self.state);
        let Some(since) = state.unfrozen.take() else {
            return Err(ClockError::AlreadyPaused);
        };
        state.base += since.elapsed();
        self.controlled.store(true, Ordering::Release);
        self.paused.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Pauses a clock that nobody has read yet at the time it was made
    /// with (`Builder::start_paused`), so that timers are whole
    /// milliseconds from the timer wheel's start, which is the same time.
    pub(crate) fn pause_at_start(&self) {
        let mut state = lock(&self.state);
        state.unfrozen = None;
        self.controlled.store(true, Ordering::Release);
        self.paused.store(true, Ordering::SeqCst);
    }

    /// Lets a paused clock run again from where it stands.
    pub(crate) fn resume(&self) -> Result<(), ClockError> {
        let mut state = lock(&self.state);
        if state.unfrozen.is_some() {
            return Err(ClockError::NotPaused);
        }
        state.unfrozen = Some(Instant::now());
        self.paused.store(false, Ordering::SeqCst);
        Ok(())
    }

    /// Moves a paused clock forward by `duration`.
    pub(crate) fn advance(&self, duration: Duration) -> Result<(), ClockError> {
        let mut state = lock(&self.state);
        if state.unfrozen.is_some() {
            return Err(ClockError::NotPaused);
        }
        state.base = state.base.checked_add(duration).unwrap_or(state.base);
        Ok(())
    }

    /// Moves a paused clock forward to `target` (the auto-advance); does
    /// nothing if the clock runs or already stands there or later.
    pub(crate) fn advance_to(&self, target: Instant) {
        let mut state = lock(&self.state);
        if state.unfrozen.is_none() && target > state.base {
            state.base = target;
        }
    }

    /// Takes a hold (see the module docs).
    pub(crate) fn acquire_hold(&self) {
        self.holds.fetch_add(ONE_HOLD, Ordering::SeqCst);
    }

    /// Releases a hold. Returns `true` if it was the last one and the clock
    /// is paused: the caller must then wake the driver's watcher, which may
    /// now auto-advance.
    pub(crate) fn release_hold(&self) -> bool {
        let previous = self.holds.fetch_sub(1, Ordering::SeqCst);
        debug_assert!(previous & COUNT_MASK > 0, "hold released twice");
        previous & COUNT_MASK == 1 && self.is_paused()
    }

    /// The holds word, for the decider: compare two reads with
    /// [`holds_unchanged_and_free`].
    pub(crate) fn holds_word(&self) -> u64 {
        self.holds.load(Ordering::SeqCst)
    }
}

/// Whether two reads of [`Clock::holds_word`] show no hold at all, and
/// none taken between them.
pub(crate) fn holds_unchanged_and_free(before: u64, after: u64) -> bool {
    before == after && before & COUNT_MASK == 0
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn paused_clock_stands_still_until_advanced_and_runs_on_after_resume() {
        let clock = Clock::new(Instant::now());
        clock.pause().unwrap();
        let frozen = clock.now();
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(clock.now(), frozen);
        assert_eq!(clock.pause(), Err(ClockError::AlreadyPaused));
        clock.advance(Duration::from_secs(60)).unwrap();
        assert_eq!(clock.now(), frozen + Duration::from_secs(60));
        clock.advance_to(frozen); // never backwards
        assert_eq!(clock.now(), frozen + Duration::from_secs(60));
        clock.resume().unwrap();
        assert!(clock.now() >= frozen + Duration::from_secs(60));
        assert_eq!(clock.resume(), Err(ClockError::NotPaused));
        assert_eq!(clock.advance(Duration::ZERO), Err(ClockError::NotPaused));
    }

    #[test]
    fn a_hold_taken_and_released_between_two_reads_is_seen() {
        let clock = Clock::new(Instant::now());
        let before = clock.holds_word();
        assert!(holds_unchanged_and_free(before, clock.holds_word()));
        clock.acquire_hold();
        assert!(!holds_unchanged_and_free(before, clock.holds_word()));
        assert!(!clock.release_hold(), "not paused: nobody to wake");
        assert!(!holds_unchanged_and_free(before, clock.holds_word()));
        let after = clock.holds_word();
        assert!(holds_unchanged_and_free(after, clock.holds_word()));
        clock.pause().unwrap();
        clock.acquire_hold();
        assert!(clock.release_hold(), "the last hold of a paused clock");
    }
}

#[cfg(all(test, loom))]
mod loom_models;
