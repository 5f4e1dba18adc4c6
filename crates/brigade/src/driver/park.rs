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
//! - `waiting` is set while the worker waits on the condvar (set before the
//!   wait, which releases the mutex atomically; cleared when it returns).
//!   `unpark` and `nudge` signal the condvar only when it is set: a worker
//!   not waiting yet checks `notified` under the mutex before it waits, so
//!   it needs no signal, and a signal costs a `futex` call whether anyone
//!   waits or not.

use crate::sync::{Condvar, Mutex, MutexGuard, lock, wait, wait_timeout};

#[derive(Default)]
struct State {
    notified: bool,
    in_driver: bool,
    waiting: bool,
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
            state.waiting = true;
            state = wait(&self.condvar, state);
            state.waiting = false;
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
            state.waiting = true;
            state = wait_timeout(&self.condvar, state, timeout).0;
            state.waiting = false;
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
        self.signal_if_waiting(state);
        false
    }

    /// Signals the condvar if the worker waits on it (see the module docs).
    fn signal_if_waiting(&self, state: MutexGuard<'_, State>) {
        let waiting = state.waiting;
        drop(state);
        if waiting {
            self.condvar.notify_one();
        }
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
        self.signal_if_waiting(state);
        true
    }

    /// Drops a notification that was delivered but is no longer needed.
    pub(crate) fn clear(&self) {
        lock(&self.state).notified = false;
    }
}
