//! Attention holds: reasons for a running task to look at its flags at its
//! next yield point.
//!
//! ## Where the count lives
//! The holds are counted in the upper half of the runtime's packed state
//! word (bits `32..` of a 64-bit `usize`), whose lower half holds `Idle`'s
//! searching and idle counts (`idle.rs`). They share one `AtomicUsize` so
//! that `yield_if_busy()`'s fast path reads both with a single load
//! ([`fast_path_may_continue`](crate::runtime::scheduler::idle::fast_path_may_continue)): it
//! returns at once only while a worker is idle *and* no hold is out.
//! [`Idle`](crate::runtime::scheduler::idle::Idle) stores the word; this module owns the
//! attention field in it.
//!
//! ## Who holds
//! - Shutdown takes one for good (never given back), after it sets its
//!   flag (`shutdown.rs`).
//! - `JoinHandle::abort` takes one until the aborted task's future is
//!   dropped (`task/cancel.rs`, through the runtime's `TaskHost`).
//!
//! While any hold is out `yield_if_busy()` takes its slow path, which gives
//! way if the runtime is shutting down or the task was aborted. So a loop
//! that calls `yield_if_busy()` always reaches a `Pending` soon after
//! either, and its worker gets to see the shutdown or drop the task.
//!
//! ## Orderings
//! [`Attention::hold`] is `Release`: a reader that sees the hold (the fast
//! path's load is `Relaxed`, so only eventually; loom models read it with
//! `Acquire`) also sees what the holder wrote before it: shutdown sets its
//! flag first. Otherwise the count only sends `yield_if_busy()` down its
//! slow path, and what the slow path then reads (the shutdown flag, the
//! task's cancel state) is ordered on its own. That the count never goes
//! below zero follows from the cancel state's AcqRel operations
//! (`task/cancel.rs`), so [`Attention::release`] is `Relaxed`.

use crate::sync::{AtomicUsize, Ordering};

/// Where the attention field starts in the packed state word: the upper
/// half (the lower half is `Idle`'s).
pub(crate) const ATTENTION_SHIFT: u32 = usize::BITS / 2;
/// One attention hold in the packed state word.
pub(crate) const ATTENTION_ONE: usize = 1 << ATTENTION_SHIFT;

/// The attention field of a packed state word (see the module docs).
#[derive(Clone, Copy)]
pub(crate) struct Attention<'word> {
    word: &'word AtomicUsize,
}

impl<'word> Attention<'word> {
    /// The attention field of `word`, a packed state word.
    pub(crate) fn new(word: &'word AtomicUsize) -> Self {
        Attention { word }
    }

    /// Takes one attention hold; give it back with
    /// [`release`](Self::release). `Release`: see the module docs.
    pub(crate) fn hold(self) {
        self.word.fetch_add(ATTENTION_ONE, Ordering::Release);
    }

    /// Gives back one hold taken by [`hold`](Self::hold). `Relaxed`: see
    /// the module docs.
    pub(crate) fn release(self) {
        let previous = self.word.fetch_sub(ATTENTION_ONE, Ordering::Relaxed);
        debug_assert!(previous >= ATTENTION_ONE, "attention released twice");
    }

    /// How many attention holds are out.
    pub(crate) fn holds(self) -> usize {
        self.word.load(Ordering::Relaxed) / ATTENTION_ONE
    }

    /// Whether anything holds attention: running tasks must check, at
    /// their next yield point, whether they were aborted or the runtime is
    /// shutting down.
    #[cfg(test)]
    pub(crate) fn is_held(self) -> bool {
        self.holds() > 0
    }
}
