//! A task's stepping-aside state ([`YieldState`]), kept in its header: at
//! most one entry in the yield queue (`yield_queue/`), and the sentinel of
//! the step-aside decision (`runtime/scheduler/worker/step_aside.rs`).

use crate::sync::{AtomicBool, Ordering};

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
///   bounce off each other (`runtime/scheduler/worker/step_aside.rs`). Only the
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
