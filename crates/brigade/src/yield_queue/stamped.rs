//! The yield queue's storage: a FIFO of items stamped with when they were
//! pushed, whose head's stamp can be read without the lock.
//!
//! ## Protocol
//! The items are under a mutex. `head_at` mirrors the head item's stamp
//! ([`EMPTY`] when there is none): written under the lock by every push,
//! pop and removal, read without it by [`StampedQueue::is_empty`] and
//! [`StampedQueue::head_at`]. Those reads publish nothing (a reader that
//! wants an item takes the lock), so they only need to be ordered with the
//! park protocol's fences: a pusher calls `Idle::notify_one` after its
//! push, which fences (`SeqCst`) before it loads the idle state, and a
//! parking worker fences between counting itself idle and its `is_empty`
//! check, so either the parker sees the item or the pusher sees the parker
//! (`runtime/scheduler/idle.rs`, "The race this closes"). The stores and loads of
//! `head_at` are therefore `Relaxed`; `loom_models` checks the race against
//! this queue itself, not a stand-in. `len_hint` mirrors the number of items
//! the same way, for [`StampedQueue::has_backlog`].
//!
//! [`StampedQueue::push`] also looks at the item under the lock, after the
//! items pushed before it and before those pushed after it: the yield queue
//! uses that to close a race with a concurrent sweep (`take_where`), see
//! `YieldQueue`'s protocol and `Shared::evict_aborted`.

use std::collections::VecDeque;

use crate::sync::{AtomicU64, AtomicUsize, Mutex, Ordering, lock};

/// `head_at` of an empty queue.
const EMPTY: u64 = u64::MAX;

/// A FIFO of `(item, stamp)` pairs; see the module docs.
pub(crate) struct StampedQueue<T> {
    items: Mutex<VecDeque<(T, u64)>>,
    /// The head item's stamp, or [`EMPTY`].
    head_at: AtomicU64,
    /// How many items there are (written under the lock, like `head_at`).
    len_hint: AtomicUsize,
    /// Items pushed so far. Statistics only (no protocol reads it), hence
    /// `std`; written under the lock, so a load and a store, not a locked
    /// read-modify-write.
    pushed: std::sync::atomic::AtomicU64,
}

impl<T> StampedQueue<T> {
    pub(crate) fn new() -> Self {
        StampedQueue {
            items: Mutex::new(VecDeque::new()),
            head_at: AtomicU64::new(EMPTY),
            len_hint: AtomicUsize::new(0),
            pushed: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Pushes `item` stamped `at` (not `u64::MAX`), and returns what `look`
    /// says of it, asked under the lock.
    pub(crate) fn push<R>(&self, item: T, at: u64, look: impl FnOnce(&T) -> R) -> R {
        let mut items = lock(&self.items);
        let seen = look(&item);
        if items.is_empty() {
            self.head_at.store(at, Ordering::Relaxed);
        }
        items.push_back((item, at));
        self.len_hint.store(items.len(), Ordering::Relaxed);
        let pushed = self.pushed.load(std::sync::atomic::Ordering::Relaxed);
        self.pushed
            .store(pushed + 1, std::sync::atomic::Ordering::Relaxed);
        seen
    }

    /// Takes the oldest item, if `take` accepts it (giving back what it
    /// takes from it), and pushes `item` stamped `at` behind the rest, in
    /// one hold of the lock; otherwise leaves the queue as it was and gives
    /// `item` back. `look` is asked of `item` under the lock, as by
    /// [`push`](Self::push). The number of items does not change, so
    /// `is_empty` reads the same before and after.
    pub(crate) fn rotate<U, R>(
        &self,
        item: T,
        at: u64,
        look: impl FnOnce(&T) -> R,
        take: impl FnOnce(T) -> Result<U, T>,
    ) -> Result<((U, u64), R), T> {
        let mut items = lock(&self.items);
        let Some((head, since)) = items.pop_front() else {
            return Err(item);
        };
        let taken = match take(head) {
            Ok(taken) => taken,
            Err(head) => {
                items.push_front((head, since));
                return Err(item);
            }
        };
        let seen = look(&item);
        items.push_back((item, at));
        self.store_head(&items);
        let pushed = self.pushed.load(std::sync::atomic::Ordering::Relaxed);
        self.pushed
            .store(pushed + 1, std::sync::atomic::Ordering::Relaxed);
        Ok(((taken, since), seen))
    }

    /// How many items were pushed so far (read without the lock: may lag).
    pub(crate) fn pushed(&self) -> u64 {
        self.pushed.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Takes the oldest item, with its stamp.
    pub(crate) fn pop(&self) -> Option<(T, u64)> {
        let mut items = lock(&self.items);
        let popped = items.pop_front()?;
        self.store_head(&items);
        Some(popped)
    }

    /// Takes out, in order, every item `take` selects (as `Ok(taken)`),
    /// wherever it is in the queue.
    pub(crate) fn take_where<U>(&self, mut take: impl FnMut(T) -> Result<U, T>) -> Vec<U> {
        // Always under the lock, even when `head_at` says empty: the race
        // with `push` that the caller closes relies on the lock's order (an
        // unlocked look could miss an item pushed just before; the loom
        // model below finds that interleaving).
        let mut taken = Vec::new();
        let mut items = lock(&self.items);
        let mut kept = VecDeque::with_capacity(items.len());
        for (item, at) in items.drain(..) {
            match take(item) {
                Ok(out) => taken.push(out),
                Err(item) => kept.push_back((item, at)),
            }
        }
        *items = kept;
        self.store_head(&items);
        taken
    }

    fn store_head(&self, items: &VecDeque<(T, u64)>) {
        let head_at = items.front().map_or(EMPTY, |(_, at)| *at);
        self.head_at.store(head_at, Ordering::Relaxed);
        self.len_hint.store(items.len(), Ordering::Relaxed);
    }

    /// Whether the queue is empty (a hint; see the module docs).
    pub(crate) fn is_empty(&self) -> bool {
        self.head_at.load(Ordering::Relaxed) == EMPTY
    }

    /// The oldest item's stamp, if there is one (a hint).
    pub(crate) fn head_at(&self) -> Option<u64> {
        let at = self.head_at.load(Ordering::Relaxed);
        (at != EMPTY).then_some(at)
    }

    pub(crate) fn len(&self) -> usize {
        lock(&self.items).len()
    }

    /// Whether the queue holds two items or more (a hint, like `head_at`).
    pub(crate) fn has_backlog(&self) -> bool {
        self.len_hint.load(Ordering::Relaxed) >= 2
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_head_stamp_follows_pushes_pops_and_removals() {
        let queue = StampedQueue::new();
        assert!(queue.is_empty() && queue.head_at().is_none());
        assert!(queue.push(1, 10, |item| *item == 1));
        queue.push(2, 20, |_| ());
        queue.push(3, 30, |_| ());
        assert_eq!(queue.head_at(), Some(10));
        assert!(queue.has_backlog());
        assert_eq!(
            queue.take_where(|item| if item != 2 { Ok(item) } else { Err(item) }),
            [1, 3]
        );
        assert_eq!((queue.head_at(), queue.len()), (Some(20), 1));
        assert!(!queue.has_backlog());
        assert_eq!(queue.pop(), Some((2, 20)));
        assert!(queue.is_empty() && queue.pop().is_none());
    }

    #[test]
    fn a_rotation_swaps_the_head_it_accepts_for_an_item_at_the_back() {
        let queue = StampedQueue::new();
        let odd = |item: u32| if item % 2 == 1 { Ok(item) } else { Err(item) };
        assert_eq!(queue.rotate(9, 5, |_| (), odd), Err(9), "nothing to take");
        queue.push(1, 10, |_| ());
        queue.push(2, 20, |_| ());
        assert_eq!(
            queue.rotate(3, 30, |item| *item == 3, odd),
            Ok(((1, 10), true))
        );
        assert_eq!(
            (queue.head_at(), queue.len(), queue.pushed()),
            (Some(20), 2, 3)
        );
        // A head the rotation does not accept stays where it was.
        assert_eq!(queue.rotate(5, 40, |_| (), odd), Err(5));
        assert_eq!(queue.pop(), Some((2, 20)));
        assert_eq!(queue.pop(), Some((3, 30)));
        assert!(queue.is_empty());
    }
}

#[cfg(all(test, loom))]
mod loom_models;
