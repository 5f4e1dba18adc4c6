//! A worker's run-next slot: the one task it runs after the current poll,
//! ahead of its deque.
//!
//! A task that a poll spawns or wakes on its own worker is usually the
//! task that poll's output is for: the other end of a channel, a child the
//! parent will await, the next link of a chain. Run at once, its data is
//! still in the cache and the round trip ends before the next one starts;
//! at the back of a FIFO deque it waits behind every other round, each of
//! whose objects stays alive meanwhile. (`ping_pong` with 1 worker keeps
//! 1,000 rounds, 3,000 allocations, alive at once that way, so nearly every
//! allocation misses the allocator's thread cache: 2 atomic instructions
//! each on its locked path; docs/decisions.md#run-next-slot.) tokio's
//! LIFO slot does the same; the worker side is `worker/run_next.rs`.
//!
//! Unlike tokio's LIFO slot, a task here can be stolen, but only once it
//! is *open*: when the poll that filled the slot goes on past a yield
//! point with a worker idle, or at a monitor sample without one
//! (`worker/spawned.rs` has who opens it and when). Until then only the
//! owner takes it, so a searching worker never takes from a busy worker
//! the task that worker is about to run (a cross-thread hand-off per
//! round, where the owner would have run it a moment later).
//!
//! ## Protocol
//! The slot is one word: 0 (empty), a task pointer (`Runnable::into_raw`,
//! aligned, so bit 0 is free), or a task pointer with [`OPEN`] set.
//! - Only the owner fills it. Into a slot it knows is empty (it took the
//!   last task itself, or never filled it) it stores (`Release`); into one
//!   that may be full, it swaps (`AcqRel`), getting back the task it had
//!   put there, or nothing if a stealer took it.
//! - The owner takes with a swap to 0 (`Acquire`): the task, open or not,
//!   or nothing if a stealer took it.
//! - Anyone may open it: a compare-exchange from `task` to `task | OPEN`
//!   (`AcqRel`); it fails harmlessly if the task was taken meanwhile.
//! - A stealer takes only an open task: a compare-exchange from
//!   `task | OPEN` to 0 (`Acquire`).
//!
//! Every take is a read-modify-write that leaves 0, so exactly one taker
//! gets each task: the task is run or dropped once. The stealer's
//! `Acquire` reads a value in the release sequence of the owner's `Release`
//! store or swap (an open's compare-exchange continues it), so the stealer
//! sees the task as the owner published it.
//!
//! Who is told about an open task: the opener calls `Idle::notify_one`
//! after opening (a `SeqCst` fence, then a look at the idle count), and a
//! worker about to sleep re-checks every queue, open slots included, after
//! its own fence (`idle.rs`): one of the two sees the other, so an open
//! task is never left while every other worker sleeps. An unopened task
//! needs no such care: its owner is running and takes it next.

use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::sync::{AtomicUsize, Ordering};
use crate::task::Runnable;

/// The bit that marks a task in the slot as open to stealers.
const OPEN: usize = 1;

/// What a slot can hold: an owned pointer that survives a round trip
/// through a word. `Runnable` in the runtime; a `Box` in the loom model.
pub(crate) trait Slotted: Sized {
    /// Gives up ownership as an aligned pointer.
    fn into_raw(self) -> NonNull<()>;
    /// Takes ownership back.
    ///
    /// # Safety
    /// `ptr` came from [`into_raw`](Self::into_raw) of this type, and is
    /// passed here at most once.
    unsafe fn from_raw(ptr: NonNull<()>) -> Self;
}

impl Slotted for Runnable {
    fn into_raw(self) -> NonNull<()> {
        Runnable::into_raw(self)
    }

    unsafe fn from_raw(ptr: NonNull<()>) -> Self {
        // SAFETY: the caller's contract: `ptr` came from `Runnable::into_raw`
        // and is used once.
        unsafe { Runnable::from_raw(ptr) }
    }
}

/// One worker's run-next slot (see the module docs).
pub(crate) struct RunNext<T: Slotted = Runnable> {
    word: AtomicUsize,
    /// The slot owns what its word points at.
    _owns: PhantomData<T>,
}

impl<T: Slotted> RunNext<T> {
    pub(crate) fn new() -> Self {
        RunNext {
            word: AtomicUsize::new(0),
            _owns: PhantomData,
        }
    }

    /// Owner only: puts `item` in a slot the owner knows is empty (it took
    /// the last item itself, or never filled it).
    #[inline]
    pub(crate) fn put_into_empty(&self, item: T) {
        debug_assert_eq!(self.word.load(Ordering::Relaxed) & !OPEN, 0);
        // Release: a stealer's `Acquire` take must see the item as written.
        // A plain store is enough: nobody else fills the slot, and a
        // stealer's compare-exchange against the old word (0, or an `OPEN`
        // left by a racing open of an item already taken) fails.
        self.word.store(encode(item), Ordering::Release);
    }

    /// Owner only: puts `item` in the slot, returning the item it replaces,
    /// if a stealer did not take that one.
    #[inline]
    pub(crate) fn replace(&self, item: T) -> Option<T> {
        // Release publishes the new item, as in `put_into_empty`; Acquire
        // is for the old one, which a stealer's open may have written last.
        decode(self.word.swap(encode(item), Ordering::AcqRel))
    }

    /// Owner only: takes the item in the slot, open or not.
    #[inline]
    pub(crate) fn take(&self) -> Option<T> {
        // Acquire: the word may come from an open's compare-exchange on
        // another thread; the item's contents are the owner's own writes.
        decode(self.word.swap(0, Ordering::Acquire))
    }

    /// Opens the item in the slot to stealers. Returns whether an item is
    /// open now (this call or an earlier one opened it).
    pub(crate) fn open(&self) -> bool {
        // Relaxed: the word is only compared; the compare-exchange below
        // decides. Its `AcqRel` keeps it in the release sequence of the
        // owner's store, which a stealer's `Acquire` then reads through;
        // the opener's `notify_one` fence orders it before the sleepers'
        // re-check (see the module docs).
        let word = self.word.load(Ordering::Relaxed);
        if word == 0 {
            return false;
        }
        word & OPEN != 0
            || self
                .word
                .compare_exchange(word, word | OPEN, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
    }

    /// Takes the item in the slot if it is open.
    pub(crate) fn steal(&self) -> Option<T> {
        // Relaxed: a hint; the `Acquire` compare-exchange takes the item
        // and synchronises with the owner's store.
        let word = self.word.load(Ordering::Relaxed);
        if word & OPEN == 0 {
            return None;
        }
        self.word
            .compare_exchange(word, 0, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .and_then(decode)
    }

    /// Whether the slot holds an open item (a stealer would find it). A
    /// check, not a take: a worker about to sleep calls it after its
    /// `SeqCst` fence (`idle.rs`), which orders it against an opener's
    /// fence; whoever then takes the item does so with an `Acquire` RMW.
    pub(crate) fn has_open(&self) -> bool {
        self.word.load(Ordering::Acquire) & OPEN != 0
    }

    /// Whether the slot holds an item, open or not (a check, as
    /// [`has_open`](Self::has_open)).
    pub(crate) fn is_full(&self) -> bool {
        self.word.load(Ordering::Acquire) != 0
    }
}

impl<T: Slotted> Drop for RunNext<T> {
    /// An item still in the slot when the slot goes is dropped with it. (A
    /// task cannot be: it holds the runtime's shared state, and so its
    /// slot, alive; a worker leaving its loop empties its own.)
    fn drop(&mut self) {
        drop(self.take());
    }
}

fn encode<T: Slotted>(item: T) -> usize {
    let word = item.into_raw().as_ptr() as usize;
    debug_assert_eq!(word & OPEN, 0, "slotted pointers are aligned");
    word
}

fn decode<T: Slotted>(word: usize) -> Option<T> {
    let ptr = NonNull::new((word & !OPEN) as *mut ())?;
    // SAFETY: every non-zero word in the slot came from `encode`, that is
    // from `T::into_raw`, and each is decoded once: every decode follows a
    // read-modify-write that replaced the word (a swap, or a
    // compare-exchange to 0), so no two takers get the same word.
    Some(unsafe { T::from_raw(ptr) })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::RunNext;
    use crate::task::{Runnable, TaskMeta};

    /// A task of `rt`'s, never scheduled, that counts its polls in `polls`
    /// (these tests run it by hand).
    fn task(rt: &crate::Runtime, polls: &Arc<AtomicUsize>) -> Runnable {
        let polls = polls.clone();
        let (runnable, task) = async_task::Builder::new()
            .metadata(TaskMeta::for_tests(&rt.handle().shared))
            .spawn(
                move |_| async move {
                    polls.fetch_add(1, Ordering::SeqCst);
                },
                |_runnable| {},
            );
        task.detach();
        runnable
    }

    fn runtime() -> crate::Runtime {
        crate::Builder::new().worker_threads(1).build().unwrap()
    }

    #[test]
    fn the_owner_takes_what_it_put_and_a_stealer_only_an_open_task() {
        let rt = runtime();
        let polls = Arc::new(AtomicUsize::new(0));
        let slot = RunNext::new();
        assert!(slot.take().is_none());
        slot.put_into_empty(task(&rt, &polls));
        assert!(slot.is_full() && !slot.has_open());
        assert!(slot.steal().is_none(), "a stealer took an unopened task");
        assert!(slot.open());
        assert!(slot.has_open());
        let stolen = slot.steal().expect("an open task can be stolen");
        assert!(!slot.is_full());
        assert!(slot.take().is_none(), "the stolen task was taken twice");
        assert!(!slot.open(), "an empty slot opened");
        stolen.run();
        assert_eq!(polls.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn replacing_hands_back_the_earlier_task_unless_it_was_stolen() {
        let rt = runtime();
        let polls = Arc::new(AtomicUsize::new(0));
        let slot = RunNext::new();
        slot.put_into_empty(task(&rt, &polls));
        let first = slot.replace(task(&rt, &polls)).expect("the first task");
        assert!(slot.open());
        let second = slot.steal().expect("the second task, opened");
        assert!(
            slot.replace(task(&rt, &polls)).is_none(),
            "a stolen task came back"
        );
        let third = slot.take().expect("the third task");
        assert!(!slot.has_open(), "the third task came in open");
        for runnable in [first, second, third] {
            runnable.run();
        }
        assert_eq!(polls.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_task_left_in_the_slot_is_dropped_with_it() {
        let rt = runtime();
        let polls = Arc::new(AtomicUsize::new(0));
        let slot = RunNext::new();
        slot.put_into_empty(task(&rt, &polls));
        assert_eq!(Arc::strong_count(&polls), 2);
        drop(slot);
        assert_eq!(Arc::strong_count(&polls), 1, "the future was not dropped");
        assert_eq!(polls.load(Ordering::SeqCst), 0);
    }
}

#[cfg(all(test, loom))]
mod loom_models;
