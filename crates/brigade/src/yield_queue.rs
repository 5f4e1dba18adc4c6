//! The yield queue: where `yield_if_busy()` parks a task that steps aside.
//!
//! It is a FIFO separate from the injector and from every worker's deque,
//! and it is *not* a place `yield_if_busy()` looks for waiting work: two
//! yielders never yield to each other through it. Workers take from it only
//! after their own deque, the injector and stealing all came up empty
//! (`worker.rs`), and a worker about to park re-checks it (`idle.rs`), so a
//! yielded task waits exactly as long as other work is waiting, no longer.
//!
//! Pushes are followed by `Idle::notify_one`, like every other push: a worker
//! may have gone idle between the yielder's decision and its push.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::sync::{Injector, injector_pop};
use crate::task::Runnable;

/// The runtime-wide queue of tasks parked by `yield_if_busy()`.
pub(crate) struct YieldQueue {
    queue: Injector<Runnable>,
    /// Statistics only (no protocol reads it), hence `std` and `Relaxed`.
    parked_total: AtomicU64,
}

impl YieldQueue {
    pub(crate) fn new() -> Self {
        YieldQueue {
            queue: Injector::new(),
            parked_total: AtomicU64::new(0),
        }
    }

    /// Parks a task. The caller must `notify_one` afterwards.
    pub(crate) fn push(&self, runnable: Runnable) {
        tracing::trace!(
            task = runnable.metadata().id(),
            "task parked in the yield queue"
        );
        self.parked_total.fetch_add(1, Ordering::Relaxed);
        self.queue.push(runnable);
    }

    /// Takes the longest-parked task.
    pub(crate) fn pop(&self) -> Option<Runnable> {
        let runnable = injector_pop(&self.queue)?;
        tracing::trace!(task = runnable.metadata().id(), "task left the yield queue");
        Some(runnable)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// How many times a task was parked here since the runtime started.
    pub(crate) fn parked_total(&self) -> u64 {
        self.parked_total.load(Ordering::Relaxed)
    }
}
