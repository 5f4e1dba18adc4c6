//! Giving a slab's memory back after a burst.
//!
//! A `slab::Slab` keeps its largest size for ever: after a burst of 10
//! million tasks the task registry held 385 MiB of empty slots, and the
//! timer wheel 80 MiB after a million cancelled sleeps, where tokio (whose
//! task list is intrusive) kept nothing. [`SlabShrink`] is the hysteresis
//! each owner runs after a removal:
//!
//! - A removal that leaves the slab empty with a large capacity (at least
//!   [`LARGE_CAPACITY`] slots) swaps in a fresh `Slab::new()`: O(1) plus the
//!   free. Keys held elsewhere stay safe because every owner checks an id or
//!   generation stored in the entry before trusting a key.
//! - A removal that leaves a large slab less than 1/8 full calls `Slab::shrink_to_fit`, which drops the vacant
//!   slots after the last occupied one and then rebuilds the free list, in
//!   O(slots). So that this stays O(1) amortised, it is tried at most once
//!   per `capacity / 16` removals: each try is paid for by the removals
//!   before it. Entries cannot move (their keys are held by tasks and
//!   timers), so what a try gives back is the vacant tail; one that finds
//!   the tail occupied gives nothing back and is tried again later. A burst
//!   drained to a few survivors is trimmed by the first try once its tail
//!   is vacant, at most `capacity / 16` ordinary removals later.
//!
//! The check on every removal is a length and a capacity compare: nothing
//! is added to inserts, lookups or wakes. Growth is never undone part way
//! while the slab is busy (more than 1/8 full), so a steady load does not
//! flap between shrinking and growing.

use slab::Slab;

/// A slab with at least this many slots is replaced by a fresh one when it
/// becomes empty, and trimmed when less than 1/8 full. Below it, the memory
/// kept is small (4,096 task entries are 128 KiB) and reuse saves the
/// regrowth.
pub(crate) const LARGE_CAPACITY: usize = 4096;

/// The state of the shrink hysteresis for one slab (see the module docs).
#[derive(Debug)]
pub(crate) struct SlabShrink {
    /// Removals since the last try to trim (saturating).
    removals: usize,
}

/// What [`SlabShrink::after_remove`] did to the slab.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Shrunk {
    /// Nothing.
    No,
    /// The slab was empty and replaced by a fresh one.
    Reset,
    /// Trailing vacant slots were trimmed (or at least it was tried).
    Trimmed,
}

impl SlabShrink {
    pub(crate) const fn new() -> Self {
        SlabShrink { removals: 0 }
    }

    /// To be called after every removal from `slab`.
    #[inline]
    pub(crate) fn after_remove<T>(&mut self, slab: &mut Slab<T>) -> Shrunk {
        let len = slab.len();
        let capacity = slab.capacity();
        self.removals = self.removals.saturating_add(1);
        if len == 0 {
            if capacity < LARGE_CAPACITY {
                return Shrunk::No;
            }
            *slab = Slab::new();
            self.removals = 0;
            return Shrunk::Reset;
        }
        if capacity < LARGE_CAPACITY || len >= capacity / 8 || self.removals < capacity / 16 {
            return Shrunk::No;
        }
        self.trim(slab);
        Shrunk::Trimmed
    }

    #[cold]
    fn trim<T>(&mut self, slab: &mut Slab<T>) {
        slab.shrink_to_fit();
        self.removals = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emptied_large_slab_is_replaced() {
        let mut slab = Slab::new();
        let mut shrink = SlabShrink::new();
        let keys: Vec<usize> = (0..10_000).map(|i| slab.insert(i)).collect();
        let mut resets = 0;
        for key in keys {
            slab.remove(key);
            resets += usize::from(shrink.after_remove(&mut slab) == Shrunk::Reset);
        }
        assert_eq!(resets, 1);
        assert_eq!(slab.capacity(), 0);
    }

    #[test]
    fn a_small_slab_keeps_its_slots() {
        let mut slab = Slab::new();
        let mut shrink = SlabShrink::new();
        let keys: Vec<usize> = (0..100).map(|i| slab.insert(i)).collect();
        for key in keys {
            slab.remove(key);
            assert_eq!(shrink.after_remove(&mut slab), Shrunk::No);
        }
        assert!(slab.capacity() >= 100);
    }

    /// A burst of 200,000 after three long-lived entries, drained in
    /// `order`, then `churn` insert/remove pairs of ordinary traffic.
    fn drain_with_survivors(drain: impl Fn(&[usize]) -> Vec<usize>, churn: usize) -> Slab<u32> {
        let mut slab = Slab::new();
        let mut shrink = SlabShrink::new();
        let keys: Vec<usize> = (0..200_000).map(|i| slab.insert(i)).collect();
        for key in drain(&keys[3..]) {
            slab.remove(key);
            shrink.after_remove(&mut slab);
        }
        for _ in 0..churn {
            let key = slab.insert(7);
            slab.remove(key);
            shrink.after_remove(&mut slab);
        }
        assert_eq!(slab.len(), 3);
        for (key, value) in keys[..3].iter().zip(0..) {
            assert_eq!(slab[*key], value, "survivors keep their keys");
        }
        slab
    }

    #[test]
    fn a_burst_drained_newest_first_is_trimmed() {
        let slab = drain_with_survivors(|keys| keys.iter().rev().copied().collect(), 0);
        assert!(
            slab.capacity() < LARGE_CAPACITY,
            "capacity {}",
            slab.capacity()
        );
    }

    #[test]
    fn a_burst_drained_oldest_first_is_trimmed_by_later_traffic() {
        let slab = drain_with_survivors(|keys| keys.to_vec(), 200_000 / 16);
        assert!(slab.capacity() < 100, "capacity {}", slab.capacity());
    }

    #[test]
    fn a_busy_slab_is_left_alone() {
        let mut slab = Slab::new();
        let mut shrink = SlabShrink::new();
        let keys: Vec<usize> = (0..200_000).map(|i| slab.insert(i)).collect();
        // Removing from the front leaves the tail occupied; more than 1/8
        // stays, so nothing is tried.
        for &key in &keys[..100_000] {
            slab.remove(key);
            assert_eq!(shrink.after_remove(&mut slab), Shrunk::No);
        }
    }
}
