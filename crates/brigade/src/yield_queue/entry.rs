//! What waits in the yield queue, and the per-task state that keeps a task
//! to at most one entry there.

use std::task::Waker;

use crate::sync::{AtomicBool, Ordering};
use crate::task::task_ref::TaskRef;
use crate::task::{Runnable, TaskMeta};

/// A deferred wake-up of a task that stepped aside in `yield_if_busy()`:
/// the task, with the waker of the poll that stepped aside (the task's
/// own), which the wake-up uses.
pub(crate) struct DeferredWake(TaskRef);

impl DeferredWake {
    /// An entry for `task`; `waker` must be the task's own.
    pub(crate) fn new(task: &TaskMeta, waker: Waker) -> Self {
        DeferredWake(TaskRef::new(task, waker))
    }

    pub(crate) fn task(&self) -> &TaskMeta {
        self.0.meta()
    }

    /// Wakes the task, after marking its entry as taken out.
    pub(crate) fn wake(self) {
        self.task().yield_state().leave_queue();
        self.0.wake();
    }
}

/// What waits in the yield queue.
pub(crate) enum Entry {
    /// A deferred wake-up (`yield_if_busy()`).
    Wake(DeferredWake),
    /// A background task's self-wake: the task itself, already scheduled.
    Run(Runnable),
}

impl Entry {
    pub(crate) fn task_id(&self) -> u64 {
        match self {
            Entry::Wake(wake) => wake.task().id(),
            Entry::Run(runnable) => runnable.metadata().id(),
        }
    }

    /// Whether this is a background task that was aborted (a deferred
    /// wake-up of an aborted task is harmless: the abort wakes the task
    /// itself).
    pub(crate) fn is_aborted_task(&self) -> bool {
        matches!(self, Entry::Run(runnable) if runnable.metadata().is_cancelled())
    }
}

/// An entry taken out of the queue, and when it went in.
pub(crate) struct Waiting {
    pub(crate) entry: Entry,
    /// Runtime-clock nanoseconds, for the yield-delay metric and the rescue
    /// of overdue entries.
    pub(crate) since: u64,
}

/// A task's stepping-aside state, in its header.
///
/// - `in_queue`: whether a deferred wake-up of this task is in the yield
///   queue. Set by the yielder that pushes the entry, cleared by whoever
///   takes it out (before it wakes the task), so a task has at most one
///   entry even when other wakes run it while its entry waits (a task woken
///   by I/O that steps aside again relies on the entry it already has). If
///   the entry is taken between the yielder's look and the end of its poll,
///   its wake-up reschedules the running task: nothing is lost. The flag
///   publishes no data: the yielder's swap, a read-modify-write, always
///   sees the latest clear, and the taker clears before it wakes, so any
///   ordering would do; AcqRel and Release cost nothing extra here.
/// - `moved_to_back`: the sentinel. The last slow-path visit of
///   `yield_if_busy()` moved this task to the back of its worker's deque;
///   seeing it again with the deque still non-empty means two yielders
///   bounce off each other (`runtime/worker/step_aside.rs`). Only the
///   thread polling the task touches it, hence `Relaxed`.
pub(crate) struct YieldState {
    in_queue: AtomicBool,
    moved_to_back: AtomicBool,
}

impl YieldState {
    pub(crate) fn new() -> Self {
        YieldState {
            in_queue: AtomicBool::new(false),
            moved_to_back: AtomicBool::new(false),
        }
    }

    /// Marks the task as having an entry in the yield queue; `false` if it
    /// already has one.
    pub(crate) fn enter_queue(&self) -> bool {
        !self.in_queue.swap(true, Ordering::AcqRel)
    }

    /// Whether a deferred wake-up of the task waits in the yield queue.
    pub(crate) fn has_entry(&self) -> bool {
        self.in_queue.load(Ordering::Acquire)
    }

    /// The task's entry has been taken out.
    pub(crate) fn leave_queue(&self) {
        self.in_queue.store(false, Ordering::Release);
    }

    /// Reads and updates the sentinel.
    pub(crate) fn replace_moved_to_back(&self, value: bool) -> bool {
        let previous = self.moved_to_back.load(Ordering::Relaxed);
        if previous != value {
            self.moved_to_back.store(value, Ordering::Relaxed);
        }
        previous
    }
}
