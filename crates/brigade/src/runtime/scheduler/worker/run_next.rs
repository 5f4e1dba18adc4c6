//! The worker's side of its run-next slot (`runtime/scheduler/run_next_slot.rs`): what
//! goes in, when it runs, and what stops it from starving the deque.
//!
//! ## What goes in
//! A foreground task scheduled on this worker while one of its polls runs,
//! other than the polled task itself: one the poll spawns or wakes (the
//! other end of a channel, an awaited child, the next link of a chain),
//! or one woken by I/O or a timer that the poll's `yield_if_busy()`
//! dispatched, which the polled task, if background, then steps aside for.
//! Not a self-wake (`yield_now`, stepping aside), which goes to the back
//! of the deque as before; not a background or elastic task, which takes
//! its turn behind the queued work; not a task woken between polls, while
//! this worker waits in the driver, or inside `block_in_place` (where
//! nothing would run it soon); and nothing on a current-thread runtime,
//! whose tasks run in the order they were scheduled, as on tokio's
//! (`worker/block_on.rs`). A second such task in the same poll takes
//! the slot and moves the first to the back of the deque, with a
//! notification, as any push into the deque has.
//!
//! ## Who hears of it
//! Nobody, at first: the worker runs the task as soon as the poll ends.
//! If the poll goes on instead, the task is *opened* to stealers and an
//! idle worker is told, by the same three checks that announce a child
//! spawned into an empty deque (`worker/spawned.rs`): the poll's next idle
//! check on `yield_if_busy()`'s fast path, its entry into
//! `block_in_place`, or the monitor's next sample.
//!
//! ## The bound
//! At most [`MAX_RUN_NEXT_STREAK`] tasks in a row come from the slot: two
//! tasks waking each other would otherwise hold the worker for ever while
//! its deque waited. The next one goes to the back of the deque (with a
//! notification if other tasks wait there), and the worker takes the
//! front. The injector's and the
//! overdue yielded tasks' turns come before the slot's (`Core::next_task`).

use super::Core;
use crate::policy::MAX_RUN_NEXT_STREAK;
use crate::runtime::scheduler::run_next_slot::RunNext;
use crate::task::Runnable;

impl Core {
    fn run_next_slot(&self) -> &RunNext {
        &self.shared.run_next[self.index]
    }

    /// Whether `runnable`, scheduled on this worker now, goes to its
    /// run-next slot (see the module docs; the wake mode is checked by the
    /// caller).
    #[inline]
    pub(super) fn may_run_next(&self, runnable: &Runnable) -> bool {
        self.current_poll.in_poll.get()
            && !self.current_poll.in_block_in_place.get()
            && self.main.block_on.is_none()
            && runnable.metadata().class_state().may_run_next()
    }

    /// Puts `runnable` in the run-next slot, telling nobody yet, and moves
    /// a task it displaces to the back of the deque. Returns whether an
    /// idle worker should be notified: for a displaced task.
    pub(super) fn put_run_next(&self, runnable: Runnable) -> bool {
        self.wakes.notify_deferred.set(true);
        let slot = self.run_next_slot();
        if !self.run_next.full.replace(true) {
            slot.put_into_empty(runnable);
            return false;
        }
        match slot.replace(runnable) {
            Some(displaced) => {
                self.local.push(displaced);
                true
            }
            // A stealer took the earlier task.
            None => false,
        }
    }

    /// Takes the task in the run-next slot, if this worker put one there
    /// and no stealer took it. No atomic operation when the worker has not
    /// used the slot since its last take.
    pub(super) fn take_run_next(&self) -> Option<Runnable> {
        if !self.run_next.full.replace(false) {
            return None;
        }
        self.run_next_slot().take()
    }

    /// `next_task`'s look at the slot: its task, unless that would be
    /// more than [`MAX_RUN_NEXT_STREAK`] in a row, in which case the task
    /// goes to the back of the deque.
    #[inline]
    pub(super) fn next_from_run_next(&self) -> Option<Runnable> {
        let Some(runnable) = self.take_run_next() else {
            self.run_next.streak.set(0);
            return None;
        };
        let streak = self.run_next.streak.get();
        if streak < MAX_RUN_NEXT_STREAK {
            self.run_next.streak.set(streak + 1);
            return Some(runnable);
        }
        self.run_next.streak.set(0);
        // Into an empty deque it is still the next task this worker runs:
        // nobody need hear of it, so a chain of spawns stays on its worker
        // (a notification every few links would wake a sleeper that steals
        // the chain; docs/decisions.md#figures-from-comments). Behind
        // other tasks it waits for them, so an idle worker is told, as for
        // any push.
        let behind_others = !self.local.is_empty();
        self.local.push(runnable);
        if behind_others {
            self.shared.idle.notify_one();
        }
        None
    }

    /// Opens the task in the run-next slot to stealers, if there is one.
    /// Returns whether a task is open there.
    pub(super) fn open_run_next(&self) -> bool {
        self.run_next.full.get() && self.run_next_slot().open()
    }
}
