//! Where a task spawned on a worker goes, and when an idle worker hears of
//! it.
//!
//! A spawned task goes to the back of the spawning worker's deque, like any
//! task woken there. What differs is the notification. Into an *empty*
//! deque, during a poll, it is held back: this worker will run the child
//! itself when the poll ends, since it is then the only task its deque
//! holds. A chain of spawns (each task spawning the next, as request
//! handlers and pipelines do) so stays on one worker. With a notification
//! per link, each one woke a sleeper that stole the link, and the spawning
//! worker searched and slept in its turn: `chained_spawn` at 4–16 workers
//! took 2.0–2.7 times tokio's time, whose LIFO slot keeps such a chain on
//! one worker without a word (docs/results.md, "Scaling").
//!
//! ## Who announces a held-back child
//! Unlike a task in tokio's LIFO slot, the child stays in the deque, where
//! any searcher may steal it; and it is announced after all if the poll
//! that spawned it goes on:
//! - at the poll's next idle check on `yield_if_busy()`'s fast path, within
//!   an epoch or 1024 calls (`Core::recheck_idle`): with a worker idle the
//!   fast path lets the parent go on, and nothing else would tell the idle
//!   worker;
//! - when the poll enters `block_in_place`;
//! - for a poll with no yield point, by the monitor thread at its next
//!   watch of the poll watches (`monitor.rs`, `announce_waiting_spawns`),
//!   every half long-poll threshold (5 ms by default). With the long-poll
//!   detector and compensation both off the monitor does not watch, and
//!   such a child waits for its parent's poll to end, as in tokio.
//!
//! A second spawn in the same poll finds the deque non-empty and notifies
//! as every other push does. The flag is cleared when the poll ends
//! (`Core::run_task`); a wake-up that is not a spawn always notifies
//! (`Core::push_local`).
//!
//! Nothing can be lost: the child is in the deque until this worker pops
//! it after the poll or a searcher steals it, both of which take it whole
//! (the deque's own protocol); the notification only decides who gets
//! there first.

use super::{Core, WakeMode};
use crate::task::Runnable;

impl Core {
    /// Pushes a task spawned on this worker (see the module docs). Returns
    /// whether an idle worker should be notified now.
    pub(crate) fn push_spawned(&self, runnable: Runnable) -> bool {
        if self.wake_mode.get() == WakeMode::Notify && self.local.is_empty() {
            self.local.push(runnable);
            self.notify_deferred.set(true);
            return false;
        }
        self.push_local(runnable)
    }

    /// Announces a spawn whose notification [`push_spawned`] held back, if
    /// the child still waits: the poll that spawned it goes on.
    ///
    /// [`push_spawned`]: Self::push_spawned
    #[inline]
    pub(crate) fn flush_deferred_notify(&self) {
        if self.notify_deferred.replace(false) && !self.local.is_empty() {
            self.shared.idle.notify_one();
        }
    }
}
