//! Stepping aside: how a running task gives way to waiting work, where it
//! waits, and how it comes back. One operation, in one module.
//!
//! ## 1. Decide ([`decide`])
//! `yield_if_busy()`'s fast path (`coop.rs`) returns at once while a worker
//! is idle. Otherwise its slow path ([`decide::slow_path`]) looks, cheapest
//! first, for work that waits for a worker: the own deque, the injector, and
//! once per epoch (`runtime/epoch.rs`) the I/O driver, the other workers'
//! deques and an overdue yield queue. It answers *continue*, *move to the
//! back* or *step aside*. The self-wake of a background task (`task/class.rs`)
//! asks the same question from the schedule hook
//! ([`decide::background_steps_aside`]).
//!
//! ## 2. Go
//! - **Move to the back**: the task wakes its own waker and returns
//!   `Pending`; the schedule hook puts it at the back of its worker's deque
//!   behind the waiting task, on the same warm worker. The task's
//!   [`YieldState`] remembers it (the sentinel), so a task that finds the
//!   deque still busy on its next visit steps aside instead of bouncing.
//! - **Step aside**: into the [`YieldQueue`], separate from the injector and
//!   every deque. `yield_if_busy()` defers its waker there ([`defer_wake`],
//!   [`Entry::Wake`]) and returns `Pending` without waking anyone; nothing
//!   is left on the task for a later, unrelated wake to read. A background
//!   task's self-wake puts the scheduled task itself there ([`step_aside_woken`],
//!   [`Entry::Run`]). A task keeps at most one entry ([`YieldState`]).
//!
//! ## 3. Come back ([`resume`])
//! A worker takes from the yield queue only after its own deque, the
//! injector and stealing all came up empty and I/O was polled in this epoch
//! (`Core::next_task`), and a worker about to sleep re-checks it
//! (`runtime/idle.rs`). So an entry waits only as long as other work waits,
//! and two yielders never yield to each other through it. A deferred
//! wake-up is delivered by the worker that takes it, which runs the task
//! next, on itself.
//!
//! ## 4. Never for ever ([`rescue`])
//! Under a flood of foreground work the queue would never be served: an
//! *overdue* queue has its head rescued ahead of other work for a short
//! slice, within a cap on the workers' time.
//!
//! ## Protocol
//! The entries are kept in a [`StampedQueue`] (`stamped.rs`), whose head's
//! stamp can be read without its lock. Every push is followed by
//! `Idle::notify_one` and a look at the shutdown flag
//! (`Shared::after_shared_push`), like every other push to a shared queue:
//! a worker may have gone idle, or shutdown may have drained the queue,
//! between the decision to step aside and the push (`stamped.rs` says why
//! the head's stamp needs no more than the sleep protocol's fences). A waker
//! or task left in the queue would keep its task, and with it the runtime's
//! shared state, alive: shutdown drains it ([`YieldQueue::drain`]).
//!
//! An abort must reach a background task that waits here as an
//! [`Entry::Run`]: its wake-up does nothing to a task that is already
//! scheduled. So an abort sweeps the queue ([`evict_aborted`]), and a push
//! looks at the task's abort flag under the queue's lock; the lock orders
//! the two, so whichever comes second sees the other's write.

pub(crate) mod decide;
mod entry;
pub(crate) mod rescue;
pub(crate) mod resume;
pub(crate) mod stamped;

use std::task::Waker;

pub(crate) use entry::{DeferredWake, Entry, Waiting, YieldState};
use stamped::StampedQueue;
// Statistics only, so not from `crate::sync`.
use std::sync::atomic::{AtomicU64, Ordering};

use crate::runtime::Shared;
use crate::runtime::worker::Core;
use crate::task::{Runnable, TaskMeta};

/// The runtime-wide queue of tasks that stepped aside.
pub(crate) struct YieldQueue {
    entries: StampedQueue<Entry>,
    /// Statistics only (no protocol reads it), hence `std` and `Relaxed`.
    entered_total: AtomicU64,
}

impl YieldQueue {
    pub(crate) fn new() -> Self {
        YieldQueue {
            entries: StampedQueue::new(),
            entered_total: AtomicU64::new(0),
        }
    }

    /// Puts an entry in at `at`. The caller must `notify_one` and check for
    /// shutdown afterwards (see the module docs). Returns whether the entry
    /// is a background task that was aborted: its abort may have swept the
    /// queue before the push. The flag is read under the queue's lock,
    /// after the push in the lock's order, so either this read or the sweep
    /// sees the other side's write.
    #[must_use = "an aborted task must be evicted"]
    fn push(&self, entry: Entry, at: u64) -> bool {
        tracing::trace!(
            task = entry.task_id(),
            "task stepped aside into the yield queue"
        );
        self.entered_total.fetch_add(1, Ordering::Relaxed);
        self.entries.push(entry, at, Entry::is_aborted_task)
    }

    /// Takes the entry that has waited longest.
    pub(crate) fn pop(&self) -> Option<Waiting> {
        let (entry, since) = self.entries.pop()?;
        tracing::trace!(task = entry.task_id(), "task left the yield queue");
        Some(Waiting { entry, since })
    }

    /// Takes out every background task (`Entry::Run`) that was aborted,
    /// wherever it waits.
    fn take_aborted(&self) -> Vec<Runnable> {
        self.entries.take_where(|entry| match entry {
            Entry::Run(runnable) if runnable.metadata().is_cancelled() => Ok(runnable),
            other => Err(other),
        })
    }

    /// Empties the queue (shutdown): deferred wake-ups are woken (their
    /// tasks are then set aside by the schedule hook, which sees the
    /// shutdown flag), background tasks go to `set_aside`.
    pub(crate) fn drain(&self, set_aside: impl Fn(Runnable)) {
        while let Some(waiting) = self.pop() {
            match waiting.entry {
                Entry::Wake(wake) => wake.wake(),
                Entry::Run(runnable) => set_aside(runnable),
            }
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// When the entry that has waited longest went in, if there is one.
    pub(crate) fn head_at(&self) -> Option<u64> {
        self.entries.head_at()
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// How many times a task stepped aside into the queue since the runtime
    /// started.
    pub(crate) fn entered_total(&self) -> u64 {
        self.entered_total.load(Ordering::Relaxed)
    }
}

/// Steps a task aside in `yield_if_busy()`: its waker, the task's own, goes
/// to the yield queue, to be woken when a worker runs out of other work. A
/// task that already has an entry keeps it (see [`YieldState`]).
pub(crate) fn defer_wake(shared: &Shared, task: &TaskMeta, waker: &Waker) {
    if !task.yield_state().enter_queue() {
        return;
    }
    let at = shared.clock_nanos();
    // A deferred wake-up of an aborted task is harmless: the abort wakes
    // the task itself.
    let _ = shared
        .yield_queue
        .push(Entry::Wake(DeferredWake::new(task, waker.clone())), at);
    shared.after_shared_push();
}

/// Steps a woken background task aside (from the schedule hook on `core`,
/// once [`decide::background_steps_aside`] said so): the scheduled task
/// itself goes to the yield queue.
pub(crate) fn step_aside_woken(shared: &Shared, core: &Core, runnable: Runnable) {
    shared.metrics.worker(core.index()).count_yield();
    let at = shared.clock_nanos();
    let aborted = shared.yield_queue.push(Entry::Run(runnable), at);
    shared.after_shared_push();
    if aborted {
        // Aborted between the look in `background_steps_aside` and the
        // push: the abort's own sweep may have come first.
        evict_aborted(shared);
    }
}

/// Hands every aborted background task waiting in the yield queue to the
/// workers, which drop it. Called by `JoinHandle::abort` after it sets the
/// flag, and by a pusher that finds the flag set after its push (see the
/// module docs).
pub(crate) fn evict_aborted(shared: &Shared) {
    for runnable in shared.yield_queue.take_aborted() {
        shared.push_injected(runnable);
    }
}
