//! The yield queue: where tasks that step aside wait until a worker has
//! nothing else to do.
//!
//! ## What it holds
//! One FIFO of entries, each stamped with when it was parked:
//! - **Deferred wake-ups** ([`Entry::Wake`]): `yield_if_busy()` pushes the
//!   waker of the poll that steps aside and returns `Pending` without waking
//!   anyone; whoever takes the entry out wakes it, which schedules the task
//!   onto that worker's own deque. At most one per task
//!   (`TaskMeta::in_yield_queue`: a task that another wake ran while its
//!   entry waited, and that steps aside again, keeps relying on the entry
//!   it has). Nothing is left on the task: the decision to step aside is
//!   carried by the entry, so a `yield_if_busy()` polled with a waker that
//!   is not its task's own defers no state for an unrelated later wake.
//! - **Scheduled background tasks** ([`Entry::Run`]): the schedule hook
//!   parks a background task's self-wake here (`task/class.rs`) as the
//!   task itself, already scheduled, so taking it out needs no wake-up.
//!
//! ## Who takes from it
//! It is separate from the injector and from every worker's deque, and it
//! is *not* a place `yield_if_busy()` looks for waiting work: two yielders
//! never yield to each other through it. Workers take from it
//! (`worker.rs`):
//! - after their own deque, the injector and stealing all came up empty,
//!   and a worker about to park re-checks it (`idle.rs`), so a parked task
//!   waits only as long as other work is waiting;
//! - and, so that it never waits for ever under a flood of foreground work,
//!   when its oldest entry has waited longer than the runtime's
//!   `max_yield_delay` (`runtime/yield_rescue.rs`).
//!
//! ## Protocol
//! The entries are kept in a [`StampedQueue`] (`stamped.rs`), whose head's
//! stamp can be read without its lock. Every push is followed by
//! `Idle::notify_one` and a look at the shutdown flag
//! (`Shared::after_shared_push`), like every other push to a shared queue:
//! a worker may have gone idle, or shutdown may have drained the queue,
//! between the decision to step aside and the push (`stamped.rs` says why
//! the head's stamp needs no more than the park protocol's fences). A waker
//! or task left in the queue would keep its task, and with it the runtime's
//! shared state, alive: shutdown drains it (`shutdown.rs`).

pub(crate) mod stamped;

use std::ptr::NonNull;
use std::task::Waker;

use crate::task::{Runnable, TaskMeta};
use stamped::StampedQueue;
// Statistics only, so not from `crate::sync`.
use std::sync::atomic::{AtomicU64, Ordering};

/// A deferred wake-up of a task that stepped aside in `yield_if_busy()`.
pub(crate) struct Yielded {
    /// The waker of the poll that stepped aside: the task's own.
    waker: Waker,
    /// The task's header. Valid while `waker` lives: the waker holds a
    /// reference to the task's allocation, which contains the header.
    task: NonNull<TaskMeta>,
}

// SAFETY: `Waker` is `Send + Sync`, and `task` is only turned into a
// `&TaskMeta` (`TaskMeta` is `Sync`) while the waker keeps it alive.
unsafe impl Send for Yielded {}
// SAFETY: as above.
unsafe impl Sync for Yielded {}

impl Yielded {
    /// An entry for `task`; `waker` must be the task's own.
    pub(crate) fn new(task: &TaskMeta, waker: Waker) -> Self {
        Yielded {
            waker,
            task: NonNull::from(task),
        }
    }

    fn task(&self) -> &TaskMeta {
        // SAFETY: see the `task` field; `self.waker` is alive.
        unsafe { self.task.as_ref() }
    }

    /// Wakes the task, after marking its entry as taken out.
    pub(crate) fn wake(self) {
        self.task().leave_yield_queue();
        self.waker.wake();
    }
}

/// What waits in the yield queue.
pub(crate) enum Entry {
    /// A deferred wake-up (`yield_if_busy()`).
    Wake(Yielded),
    /// A background task's self-wake, the task itself.
    Run(Runnable),
}

impl Entry {
    fn task_id(&self) -> u64 {
        match self {
            Entry::Wake(yielded) => yielded.task().id(),
            Entry::Run(runnable) => runnable.metadata().id(),
        }
    }
}

/// An entry and when it was parked.
pub(crate) struct Parked {
    pub(crate) entry: Entry,
    /// Runtime-clock nanoseconds, for the yield-delay metric and the rescue
    /// of overdue entries.
    pub(crate) at: u64,
}

/// The runtime-wide queue of tasks that stepped aside.
pub(crate) struct YieldQueue {
    entries: StampedQueue<Entry>,
    /// Statistics only (no protocol reads it), hence `std` and `Relaxed`.
    parked_total: AtomicU64,
}

impl YieldQueue {
    pub(crate) fn new() -> Self {
        YieldQueue {
            entries: StampedQueue::new(),
            parked_total: AtomicU64::new(0),
        }
    }

    /// Parks an entry at `at`. The caller must `notify_one` and check for
    /// shutdown afterwards (see the module docs). Returns whether the entry
    /// is a background task that was aborted: its abort may have swept the
    /// queue before the push (see `Shared::evict_aborted`). The flag is
    /// read under the queue's lock, after the push in the lock's order, so
    /// either this read or the sweep sees the other side's write.
    #[must_use = "an aborted task must be evicted"]
    pub(crate) fn push(&self, entry: Entry, at: u64) -> bool {
        tracing::trace!(task = entry.task_id(), "task parked in the yield queue");
        self.parked_total.fetch_add(1, Ordering::Relaxed);
        self.entries.push(
            entry,
            at,
            |entry| matches!(entry, Entry::Run(runnable) if runnable.metadata().is_cancelled()),
        )
    }

    /// Takes the longest-parked entry.
    pub(crate) fn pop(&self) -> Option<Parked> {
        let (entry, at) = self.entries.pop()?;
        tracing::trace!(task = entry.task_id(), "task left the yield queue");
        Some(Parked { entry, at })
    }

    /// Takes out every background task (`Entry::Run`) that was aborted,
    /// wherever it waits, so that a worker drops it now rather than when
    /// the queue reaches it (an abort's wake-up does nothing to a task
    /// that is already scheduled).
    pub(crate) fn take_aborted(&self) -> Vec<Runnable> {
        self.entries.take_where(|entry| match entry {
            Entry::Run(runnable) if runnable.metadata().is_cancelled() => Ok(runnable),
            other => Err(other),
        })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// When the longest-parked entry was parked, if there is one.
    pub(crate) fn head_at(&self) -> Option<u64> {
        self.entries.head_at()
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// How many times a task was parked here since the runtime started.
    pub(crate) fn parked_total(&self) -> u64 {
        self.parked_total.load(Ordering::Relaxed)
    }
}
