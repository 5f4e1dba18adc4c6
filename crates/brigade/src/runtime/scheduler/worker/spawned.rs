//! Where a task spawned on a worker goes, and when an idle worker hears of
//! it.
//!
//! A foreground task spawned during a poll goes to the worker's run-next
//! slot (`worker/run_next.rs`), any other to the back of the spawning
//! worker's deque, like a task woken there. What differs from a wake is
//! the notification: a task put in the slot, or a background task spawned
//! into an *empty* deque, during a poll, is held back: this worker runs it
//! itself when the poll ends, since it is then the next task it takes. A
//! chain of spawns (each task spawning the next, as request handlers and
//! pipelines do) so stays on one worker. A notification per link would
//! wake a sleeper that steals the link while the spawning worker searches
//! and sleeps in its turn, a thread hop per link (tokio's LIFO slot keeps
//! such a chain on one worker without a word; the figures are in
//! docs/decisions.md#spawn-empty-deque and
//! docs/decisions.md#figures-from-comments).
//!
//! ## Who announces a held-back task
//! Unlike a task in tokio's LIFO slot, the task can be stolen once
//! announced (a task in the deque is, and announcing one in the run-next
//! slot opens it to stealers), and it is announced after all if the poll
//! that scheduled it goes on:
//! - at the poll's next idle check on `yield_if_busy()`'s fast path, within
//!   an epoch or 1024 calls (`Core::recheck_idle`): with a worker idle the
//!   fast path lets the parent go on, and nothing else would tell the idle
//!   worker;
//! - when the poll enters `block_in_place`;
//! - for a poll with no yield point, by the monitor thread at its next
//!   sample of the poll records (`monitor.rs`, `announce_waiting_spawns`),
//!   every half long-poll threshold (5 ms by default). With the long-poll
//!   detector and compensation both off the monitor does not sample, and
//!   such a task waits for its parent's poll to end, as in tokio.
//!
//! A second task for the slot in the same poll moves the first to the
//! deque, and a second background spawn finds the deque non-empty: both
//! notify as every other push does. The flag is cleared when the poll
//! ends (`Core::run_task`); a wake-up that is not a spawn and does not go
//! to the slot always notifies (`runtime/scheduler/placement.rs`, A6).
//!
//! Nothing can be lost: the task is in the deque or the slot until this
//! worker takes it after the poll or a searcher steals it, both of which
//! take it whole (the deque's own protocol, the slot's in
//! `runtime/scheduler/run_next_slot.rs`); the notification only decides who gets there
//! first.

use super::Core;

impl Core {
    /// Announces a task whose notification this poll held back (a spawn
    /// into the empty deque, or a task in the run-next slot, which it
    /// opens to stealers), if it still waits: the poll that scheduled it
    /// goes on.
    #[inline]
    pub(crate) fn flush_deferred_notify(&self) {
        if self.wakes.notify_deferred.replace(false)
            && (self.open_run_next() || !self.local.is_empty())
        {
            self.shared.idle.notify_one();
        }
    }
}
