//! How one worker sleeps until it is handed work.
//!
//! A worker sleeps either on its own condvar ([`Parker::park`]) or inside the
//! driver's poll (`Driver::park_in_poll`, bracketed by
//! [`Parker::begin_driver_park`] and [`Parker::end_driver_park`]).
//!
//! ## Protocol
//! `State` is only read and written under `state`'s mutex:
//! - [`Parker::unpark`] sets `notified`; if the worker is `in_driver` it
//!   returns `true` and the caller wakes the driver (the `mio::Waker`),
//!   otherwise it signals the condvar.
//! - [`Parker::park`] waits until `notified`, then clears it. An unpark that
//!   comes first is not lost: the flag is already set.
//! - `begin_driver_park` refuses (returns `false`) if `notified` is already
//!   set, else sets `in_driver`, so an unpark from then on wakes the driver.
//!   `end_driver_park` clears both flags. A driver park may end without a
//!   notification (I/O, a timer, a stale wake): callers treat every return
//!   as possibly spurious (`Idle::wait_for_work` re-checks the sleepers list).
//! - [`Parker::nudge`] is `unpark` for a worker outside the driver only: it
//!   does nothing to one that sleeps in the driver.

use crate::sync::{Condvar, Mutex, lock, wait, wait_timeout};

#[derive(Default)]
struct State {
    notified: bool,
    in_driver: bool,
}

/// A one-slot wake-up flag for one worker thread.
#[derive(Default)]
pub(crate) struct Parker {
    state: Mutex<State>,
    condvar: Condvar,
}

impl Parker {
    pub(crate) fn new() -> Self {
        Parker {
            state: Mutex::new(State::default()),
            condvar: Condvar::new(),
        }
    }

    /// Blocks on the condvar until notified, then consumes the notification.
    pub(crate) fn park(&self) {
        let mut state = lock(&self.state);
        while !state.notified {
            state = wait(&self.condvar, state);
        }
        state.notified = false;
    }

    /// Like [`park`](Self::park), but gives up after `timeout` (if any).
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn park_timeout(&self, timeout: Option<std::time::Duration>) {
        let Some(timeout) = timeout else {
            return self.park();
        };
        let mut state = lock(&self.state);
        if !state.notified {
            state = wait_timeout(&self.condvar, state, timeout).0;
        }
        state.notified = false;
    }

    /// Marks the worker as sleeping in the driver, unless it was already
    /// notified (then it consumes the notification and returns `false`).
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn begin_driver_park(&self) -> bool {
        let mut state = lock(&self.state);
        if state.notified {
            state.notified = false;
            return false;
        }
        state.in_driver = true;
        true
    }

    /// The worker left the driver: clears `in_driver` and any notification.
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn end_driver_park(&self) {
        let mut state = lock(&self.state);
        state.in_driver = false;
        state.notified = false;
    }

    /// Notifies the worker. Returns `true` if it sleeps in the driver, in
    /// which case the caller must wake the driver.
    pub(crate) fn unpark(&self) -> bool {
        let mut state = lock(&self.state);
        state.notified = true;
        if state.in_driver {
            return true;
        }
        drop(state);
        self.condvar.notify_one();
        false
    }

    /// Wakes the worker if it sleeps on its condvar, not in the driver
    /// (`Idle::hand_off_driver`). Returns whether it did.
    #[cfg_attr(loom, allow(dead_code))]
    pub(crate) fn nudge(&self) -> bool {
        let mut state = lock(&self.state);
        if state.in_driver {
            return false;
        }
        state.notified = true;
        drop(state);
        self.condvar.notify_one();
        true
    }

    /// Drops a notification that was delivered but is no longer needed.
    pub(crate) fn clear(&self) {
        lock(&self.state).notified = false;
    }
}
