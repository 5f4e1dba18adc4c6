//! The yield queue: where `yield_if_busy()` parks a task that steps aside.
//!
//! It holds *deferred wake-ups*: the waker of the poll that stepped aside,
//! with when and which task, at most one per task (`TaskMeta::in_yield_queue`:
//! a task that another wake ran while its entry waited, and that steps
//! aside again, keeps relying on the entry it has). `yield_if_busy()` pushes `cx.waker()` and
//! returns `Pending` without waking anyone; a worker with nothing else to do
//! pops the entry and wakes it, which schedules the task onto that worker's
//! own deque, and runs it. Nothing is left on the task: the decision to step
//! aside is carried by the entry, so a `yield_if_busy()` polled with a waker
//! that is not its task's own (inside a nested executor, say) defers that
//! waker's wake-up and leaves no state behind for an unrelated later wake.
//!
//! It is a FIFO separate from the injector and from every worker's deque,
//! and it is *not* a place `yield_if_busy()` looks for waiting work: two
//! yielders never yield to each other through it. Workers take from it only
//! after their own deque, the injector and stealing all came up empty
//! (`worker.rs`), and a worker about to park re-checks it (`idle.rs`), so a
//! yielded task waits exactly as long as other work is waiting, no longer.
//!
//! Pushes are followed by `Idle::notify_one` and a look at the shutdown flag
//! (`Shared::park_yielded`), like every other push to a shared queue: a
//! worker may have gone idle, or shutdown may have drained the queue,
//! between the yielder's decision and its push. A waker left in the queue
//! would keep its task, and with it the runtime's shared state, alive.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::Waker;

use crate::sync::{Injector, injector_pop};
use crate::task::TaskMeta;

/// A deferred wake-up of a task that stepped aside.
pub(crate) struct Yielded {
    /// The waker of the poll that stepped aside: the task's own.
    waker: Waker,
    /// The task's header. Valid while `waker` lives: the waker holds a
    /// reference to the task's allocation, which contains the header.
    task: NonNull<TaskMeta>,
    /// When it stepped aside (runtime-clock ns), for the yield-delay metric.
    at: u64,
}

// SAFETY: `Waker` is `Send + Sync`, and `task` is only turned into a
// `&TaskMeta` (`TaskMeta` is `Sync`) while the waker keeps it alive.
unsafe impl Send for Yielded {}
// SAFETY: as above.
unsafe impl Sync for Yielded {}

impl Yielded {
    /// An entry for `task`, stepping aside at `at`; `waker` must be the
    /// task's own.
    pub(crate) fn new(task: &TaskMeta, waker: Waker, at: u64) -> Self {
        Yielded {
            waker,
            task: NonNull::from(task),
            at,
        }
    }

    fn task(&self) -> &TaskMeta {
        // SAFETY: see the `task` field; `self.waker` is alive.
        unsafe { self.task.as_ref() }
    }

    /// When the task stepped aside (runtime-clock ns).
    pub(crate) fn at(&self) -> u64 {
        self.at
    }

    /// Wakes the task, after marking its entry as taken out.
    pub(crate) fn wake(self) {
        self.task().leave_yield_queue();
        self.waker.wake();
    }
}

/// The runtime-wide queue of tasks parked by `yield_if_busy()`.
pub(crate) struct YieldQueue {
    queue: Injector<Yielded>,
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

    /// Parks a task's wake-up. The caller must `notify_one` and check for
    /// shutdown afterwards (see the module docs).
    pub(crate) fn push(&self, yielded: Yielded) {
        tracing::trace!(task = yielded.task().id(), "task parked in the yield queue");
        self.parked_total.fetch_add(1, Ordering::Relaxed);
        self.queue.push(yielded);
    }

    /// Takes the longest-parked wake-up.
    pub(crate) fn pop(&self) -> Option<Yielded> {
        let yielded = injector_pop(&self.queue)?;
        tracing::trace!(task = yielded.task().id(), "task left the yield queue");
        Some(yielded)
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
