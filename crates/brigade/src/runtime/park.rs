//! How one worker sleeps until it is handed work.
//!
//! ## Protocol
//! `notified` is the only state, always read and written under `mutex`:
//! - [`Parker::unpark`] sets it to `true` and signals the condvar;
//! - [`Parker::park`] waits until it is `true`, then sets it back to `false`.
//!
//! Because the flag is set before the signal and checked under the same lock
//! the sleeper waits on, an unpark that happens before the park is not lost:
//! the park finds the flag already set and returns at once. Spurious condvar
//! wake-ups loop back to the wait.

use crate::sync::{Condvar, Mutex, lock};

/// A one-slot wake-up flag for one worker thread.
#[derive(Default)]
pub(crate) struct Parker {
    notified: Mutex<bool>,
    condvar: Condvar,
}

impl Parker {
    pub(crate) fn new() -> Self {
        Parker {
            notified: Mutex::new(false),
            condvar: Condvar::new(),
        }
    }

    /// Blocks until [`unpark`](Self::unpark) has been called since the last
    /// park returned, then consumes that notification.
    pub(crate) fn park(&self) {
        let mut notified = lock(&self.notified);
        while !*notified {
            notified = match self.condvar.wait(notified) {
                Ok(guard) => guard,
                Err(poisoned) => poisoned.into_inner(),
            };
        }
        *notified = false;
    }

    /// Wakes the parked thread, or makes its next park return at once.
    pub(crate) fn unpark(&self) {
        *lock(&self.notified) = true;
        self.condvar.notify_one();
    }

    /// Drops a notification that was delivered but is no longer needed.
    pub(crate) fn clear(&self) {
        *lock(&self.notified) = false;
    }
}
