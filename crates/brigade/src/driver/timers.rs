//! The runtime's timers: a [`Wheel`] under a mutex, advanced by whoever
//! polls the driver (a worker parked in it, a busy worker's periodic or
//! yield-epoch poll, or the fallback driver thread).
//!
//! Time is the runtime's [`Clock`], which tests may pause: then timers fire
//! only when the clock is advanced (`brigade::time::advance`, or the
//! auto-advance of `runtime/scheduler/auto_advance.rs`).

use std::task::Waker;
use std::time::{Duration, Instant};

use super::clock::Clock;
use super::wheel::{TimerKey, Wheel};
use crate::sync::{Mutex, lock};

/// Pending timers of one runtime.
pub(crate) struct Timers {
    pub(crate) clock: Clock,
    start: Instant,
    wheel: Mutex<Wheel>,
}

/// What registering a timer did.
pub(crate) enum Registered {
    /// The deadline had already passed.
    Expired,
    /// Stored; `earliest` tells whether it is now the earliest pending timer
    /// (a thread sleeping in the driver must then be woken to shorten its
    /// sleep).
    Pending { key: TimerKey, earliest: bool },
}

impl Timers {
    pub(crate) fn new() -> Self {
        let start = Instant::now();
        Timers {
            clock: Clock::new(start),
            start,
            wheel: Mutex::new(Wheel::new()),
        }
    }

    /// Milliseconds from the driver's start to `instant`, rounded up so a
    /// timer never fires early.
    fn deadline_ms(&self, instant: Instant) -> u64 {
        let since = instant.saturating_duration_since(self.start);
        let ms = since.as_millis() as u64;
        if since > Duration::from_millis(ms) {
            ms + 1
        } else {
            ms
        }
    }

    /// Milliseconds from the driver's start to now. Rounded down while the
    /// clock runs (a timer never fires early); rounded up while it is
    /// paused, so that `advance(d)` fires every timer whose deadline is at
    /// most `d` away, as a deadline's own rounding up would otherwise hold
    /// back one that falls due exactly then (a key set to expire in 1 s,
    /// then `advance(1 s)`). Under a paused clock "now" is where the test
    /// put it, so firing up to a millisecond of paused time early is the
    /// lesser surprise; tokio's paused tests rely on the same.
    fn now_ms(&self) -> u64 {
        let since = self.clock.now().saturating_duration_since(self.start);
        let ms = since.as_millis() as u64;
        if self.clock.is_paused() && since > Duration::from_millis(ms) {
            ms + 1
        } else {
            ms
        }
    }

    pub(crate) fn register(&self, deadline: Instant, waker: &Waker) -> Registered {
        let deadline_ms = self.deadline_ms(deadline);
        let mut wheel = lock(&self.wheel);
        let previous_earliest = wheel.next_expiration();
        match wheel.insert(deadline_ms, waker.clone()) {
            None => Registered::Expired,
            Some(key) => Registered::Pending {
                key,
                earliest: previous_earliest.is_none_or(|earliest| deadline_ms < earliest),
            },
        }
    }

    /// Whether the timer has fired; if not, makes `waker` the one it wakes.
    pub(crate) fn poll_fired(&self, key: TimerKey, waker: &Waker) -> bool {
        let mut wheel = lock(&self.wheel);
        if wheel.is_fired(key) {
            return true;
        }
        wheel.set_waker(key, waker);
        false
    }

    pub(crate) fn remove(&self, key: TimerKey) {
        lock(&self.wheel).remove(key);
    }

    /// Fires every due timer. Returns how many fired.
    pub(crate) fn process(&self) -> usize {
        let mut fired = Vec::new();
        {
            let now = self.now_ms();
            let mut wheel = lock(&self.wheel);
            if wheel.next_expiration().is_none_or(|next| next > now) {
                return 0;
            }
            wheel.advance(now, &mut fired);
        }
        // Wake with no lock held: a wake may reschedule into this runtime.
        let count = fired.len();
        fired.into_iter().for_each(Waker::wake);
        count
    }

    /// Runtime shutdown: wakes every pending timer, and makes every later
    /// registration `Expired`, so that a `Sleep` of this runtime completes
    /// instead of waiting for a driver that nobody polls any more.
    pub(crate) fn shutdown(&self) {
        let mut fired = Vec::new();
        lock(&self.wheel).close(&mut fired);
        fired.into_iter().for_each(Waker::wake);
    }

    /// How long until the earliest pending timer is due (`None`: no timer).
    pub(crate) fn time_to_next(&self) -> Option<Duration> {
        let due = self.next_due()?;
        Some(due.saturating_duration_since(self.clock.now()))
    }

    /// When the earliest pending timer is due (`None`: no timer).
    pub(crate) fn next_due(&self) -> Option<Instant> {
        let next = lock(&self.wheel).next_expiration()?;
        Some(self.start + Duration::from_millis(next))
    }

    /// Number of timers stored.
    pub(crate) fn len(&self) -> usize {
        lock(&self.wheel).len()
    }
}
