//! The driver for loom models of the real scheduler: no I/O and no timers,
//! the same locking and wake-up structure.
//!
//! A model must not block in `epoll_wait`, which loom cannot see. So this
//! driver keeps the real one's skeleton (`poll.rs`): one poll lock, held
//! by the worker that parks in the poll for as long as it sleeps there;
//! `Parker::begin_driver_park`/`end_driver_park` around the sleep, so an
//! unpark reaches a worker in the poll through [`Driver::wake`]; and a
//! wake-up that comes before the sleep is kept (as a `mio::Waker`'s
//! eventfd stays readable), so it is never lost. The sleep itself waits on
//! a loom condvar for [`Driver::wake`]. Polls that do not block find no
//! events. The fallback thread is not modelled.

use std::io;
use std::time::Duration;

use super::PollPark;
use super::park::Parker;
use crate::sync::{Condvar, Mutex, lock, wait};

/// I/O and timers of one runtime, without I/O or timers.
pub(crate) struct Driver {
    /// The poll: whoever holds it "polls".
    poll: Mutex<()>,
    /// Whether a worker sleeps in the poll.
    worker_in_poll: Mutex<bool>,
    /// A pending wake-up of the poll (the `mio::Waker`).
    woken: Mutex<bool>,
    woken_cv: Condvar,
}

impl Driver {
    pub(crate) fn new() -> io::Result<Driver> {
        Ok(Driver {
            poll: Mutex::new(()),
            worker_in_poll: Mutex::new(false),
            woken: Mutex::new(false),
            woken_cv: Condvar::new(),
        })
    }

    /// A non-blocking poll: there is never an event.
    pub(crate) fn poll_nonblocking(&self) -> usize {
        0
    }

    /// The epoch poll: there is never an event.
    pub(crate) fn poll_for_epoch(&self, _epoch: u64) -> usize {
        0
    }

    /// Parks a worker inside the poll, unless another thread holds it.
    pub(crate) fn park_in_poll(&self, parker: &Parker) -> PollPark {
        let Ok(poll) = self.poll.try_lock() else {
            return if *lock(&self.worker_in_poll) {
                PollPark::Occupied
            } else {
                PollPark::Busy
            };
        };
        if !parker.begin_driver_park() {
            return PollPark::Parked; // already notified: do not block
        }
        *lock(&self.worker_in_poll) = true;
        {
            let mut woken = lock(&self.woken);
            while !*woken {
                woken = wait(&self.woken_cv, woken);
            }
            *woken = false;
        }
        drop(poll);
        *lock(&self.worker_in_poll) = false;
        parker.end_driver_park();
        PollPark::Parked
    }

    /// Whether a worker sleeps in the driver's poll.
    #[cfg_attr(loom, allow(dead_code))] // The monitor thread uses it; loom models leave the monitor out.
    pub(crate) fn has_worker_in_poll(&self) -> bool {
        *lock(&self.worker_in_poll)
    }

    /// Wakes whoever is blocked in the poll.
    pub(crate) fn wake(&self) {
        *lock(&self.woken) = true;
        self.woken_cv.notify_one();
    }

    /// When the next timer is due: there are none.
    pub(crate) fn time_to_next(&self) -> Option<Duration> {
        None
    }

    /// Timers registered: none.
    pub(crate) fn num_timers(&self) -> usize {
        0
    }

    /// Nothing to stop.
    pub(crate) fn shutdown(&self) {
        self.wake();
    }
}
