//! What waits in the yield queue. The per-task state that keeps a task to
//! at most one entry there, `YieldState`, is in the task's header
//! (`task/yield_state.rs`).

use std::task::Waker;

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
