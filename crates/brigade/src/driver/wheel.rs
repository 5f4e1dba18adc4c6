//! A hierarchical timing wheel: O(1) insert and cancel, and expiry work
//! proportional to the timers that fire, so a million pending sleeps stay
//! cheap.
//!
//! Time is in whole milliseconds since the runtime started. There are
//! [`NUM_LEVELS`] levels of 64 slots; a slot on level `l` spans `64^l` ms, so
//! the wheel covers `64^6` ms (≈ 2.2 years); later deadlines are clamped to
//! that horizon. A timer is filed on the level of the highest 6-bit group in
//! which its deadline differs from `elapsed`, in the slot its deadline
//! selects on that level; that slot is always ahead of the current one, and
//! every timer on a lower level expires before any timer on a higher one.
//! When time reaches a slot on a higher level, its timers cascade down.
//!
//! Cancelled timers leave their slot entry behind; each entry carries the
//! timer's generation, so a stale entry is recognised and skipped when its
//! slot is processed.

use std::task::Waker;

use slab::Slab;

use crate::slab_shrink::{Shrunk, SlabShrink};

const SLOT_BITS: u32 = 6;
const SLOTS: usize = 1 << SLOT_BITS;
/// Number of levels in the wheel.
pub(crate) const NUM_LEVELS: usize = 6;
/// The furthest a deadline can be from `elapsed`.
const MAX_DELTA: u64 = (1 << (SLOT_BITS as usize * NUM_LEVELS)) - 1;

/// Identifies one timer in the wheel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TimerKey {
    index: usize,
    generation: u64,
}

struct Timer {
    deadline: u64,
    generation: u64,
    waker: Option<Waker>,
    fired: bool,
}

/// The largest allocation (in keys) an emptied slot keeps for reuse.
///
/// Keeping a slot's allocation saves an allocation each time the slot fills
/// again, which matters for slots of the lowest levels: they fill and empty
/// every few milliseconds. But a slot that once held a burst would keep
/// that burst's memory for good, and over one rotation of a level every
/// slot of it reaches its high-water mark: the 10-minute soak
/// (`scripts/soak.sh`) saw the live heap grow for minutes (by a third),
/// from level-2 slots (4 s each, 262 s a rotation) holding a few hundred
/// keys each, with the heap flat once they kept nothing. 64 keys (1 KiB)
/// keeps the reuse for ordinary slots and bounds what all slots retain to
/// `NUM_LEVELS` × `SLOTS` KiB.
const RETAINED_SLOT_CAPACITY: usize = 64;

struct Level {
    /// Bit `s` is set iff `slots[s]` is non-empty.
    occupied: u64,
    slots: [Vec<TimerKey>; SLOTS],
}

/// The wheel. Not thread-safe by itself; the time driver keeps it under a
/// mutex.
pub(crate) struct Wheel {
    /// Time (ms) up to which the wheel has been advanced.
    elapsed: u64,
    levels: Box<[Level; NUM_LEVELS]>,
    timers: Slab<Timer>,
    /// Gives `timers`' memory back after a burst (see `slab_shrink`).
    shrink: SlabShrink,
    next_generation: u64,
    /// Set by [`close`](Self::close) (runtime shutdown): nothing is stored
    /// any more.
    closed: bool,
}

fn level_for(elapsed: u64, deadline: u64) -> usize {
    let significant = 63 - ((elapsed ^ deadline) | (SLOTS as u64 - 1)).leading_zeros();
    (significant / SLOT_BITS) as usize
}

fn slot_for(deadline: u64, level: usize) -> usize {
    ((deadline >> (level as u32 * SLOT_BITS)) as usize) & (SLOTS - 1)
}

impl Wheel {
    pub(crate) fn new() -> Self {
        Wheel {
            elapsed: 0,
            levels: Box::new(std::array::from_fn(|_| Level {
                occupied: 0,
                slots: std::array::from_fn(|_| Vec::new()),
            })),
            timers: Slab::new(),
            shrink: SlabShrink::new(),
            next_generation: 0,
            closed: false,
        }
    }

    /// Time (ms) up to which the wheel has been advanced.
    #[cfg(test)]
    pub(crate) fn elapsed(&self) -> u64 {
        self.elapsed
    }

    /// Number of pending (not fired, not removed) timers, fired ones not yet
    /// removed included.
    pub(crate) fn len(&self) -> usize {
        self.timers.len()
    }

    /// Adds a timer. Returns `None` if `deadline` is not after `elapsed`
    /// (the timer has already expired and nothing was stored), or the wheel
    /// is closed.
    pub(crate) fn insert(&mut self, deadline: u64, waker: Waker) -> Option<TimerKey> {
        if deadline <= self.elapsed || self.closed {
            return None;
        }
        let deadline = deadline.min(self.elapsed + MAX_DELTA);
        let generation = self.next_generation;
        self.next_generation += 1;
        let index = self.timers.insert(Timer {
            deadline,
            generation,
            waker: Some(waker),
            fired: false,
        });
        let key = TimerKey { index, generation };
        self.file(key, deadline);
        Some(key)
    }

    fn file(&mut self, key: TimerKey, deadline: u64) {
        let level = level_for(self.elapsed, deadline);
        let slot = slot_for(deadline, level);
        let level = &mut self.levels[level];
        level.slots[slot].push(key);
        level.occupied |= 1 << slot;
    }

    fn timer_mut(&mut self, key: TimerKey) -> Option<&mut Timer> {
        self.timers
            .get_mut(key.index)
            .filter(|timer| timer.generation == key.generation)
    }

    /// Whether the timer has fired. A removed timer counts as fired.
    pub(crate) fn is_fired(&self, key: TimerKey) -> bool {
        self.timers
            .get(key.index)
            .is_none_or(|timer| timer.generation != key.generation || timer.fired)
    }

    /// Replaces the waker to wake when the timer fires.
    pub(crate) fn set_waker(&mut self, key: TimerKey, waker: &Waker) {
        if let Some(timer) = self.timer_mut(key)
            && !timer
                .waker
                .as_ref()
                .is_some_and(|current| current.will_wake(waker))
        {
            timer.waker = Some(waker.clone());
        }
    }

    /// Forgets a timer (fired or not). Its slot entry, if any, goes stale.
    pub(crate) fn remove(&mut self, key: TimerKey) {
        if self.timer_mut(key).is_some() {
            self.timers.remove(key.index);
            if self.shrink.after_remove(&mut self.timers) == Shrunk::Reset {
                self.drop_stale_keys();
            }
        }
    }

    /// With no timer left, every key in the slots is stale: a burst of
    /// cancelled timers would otherwise keep them (16 bytes each) until
    /// time reaches their slots, an hour for an hour-long sleep. Called
    /// only after a reset of a large slab, so its O(`NUM_LEVELS` × `SLOTS`)
    /// is paid for by the removals that emptied it.
    #[cold]
    fn drop_stale_keys(&mut self) {
        for level in self.levels.iter_mut() {
            level.occupied = 0;
            for slot in level.slots.iter_mut() {
                if slot.capacity() > RETAINED_SLOT_CAPACITY {
                    *slot = Vec::new();
                } else {
                    slot.clear();
                }
            }
        }
    }

    /// Runtime shutdown: fires every timer now, pushing the wakers onto
    /// `fired`, and stores no timer from now on (`insert` returns `None`).
    /// Keys stay valid: each reads as fired until it is removed.
    pub(crate) fn close(&mut self, fired: &mut Vec<Waker>) {
        self.closed = true;
        for level in self.levels.iter_mut() {
            level.occupied = 0;
            level.slots.iter_mut().for_each(Vec::clear);
        }
        for (_, timer) in self.timers.iter_mut() {
            timer.fired = true;
            fired.extend(timer.waker.take());
        }
    }

    /// The earliest time (ms) at which a slot holding timers expires.
    pub(crate) fn next_expiration(&self) -> Option<u64> {
        self.next_slot().map(|(_, _, expiration)| expiration)
    }

    fn next_slot(&self) -> Option<(usize, usize, u64)> {
        self.levels
            .iter()
            .enumerate()
            .find_map(|(level_index, level)| {
                if level.occupied == 0 {
                    return None;
                }
                let shift = level_index as u32 * SLOT_BITS;
                let slot_range = 1u64 << shift;
                let level_range = slot_range << SLOT_BITS;
                let current = ((self.elapsed >> shift) as usize) & (SLOTS - 1);
                let distance =
                    level.occupied.rotate_right(current as u32).trailing_zeros() as usize;
                let slot = (current + distance) % SLOTS;
                let level_start = self.elapsed & !(level_range - 1);
                let mut expiration = level_start + slot as u64 * slot_range;
                if expiration <= self.elapsed {
                    // Only the top level wraps (clamped far-future deadlines).
                    expiration += level_range;
                }
                Some((level_index, slot, expiration))
            })
    }

    /// Advances the wheel to `now` (ms), pushing the wakers of every timer
    /// whose deadline is at or before `now` onto `fired`.
    pub(crate) fn advance(&mut self, now: u64, fired: &mut Vec<Waker>) {
        while let Some((level, slot, expiration)) = self.next_slot() {
            if expiration > now {
                break;
            }
            self.elapsed = expiration;
            let level_ref = &mut self.levels[level];
            level_ref.occupied &= !(1 << slot);
            let keys = std::mem::take(&mut level_ref.slots[slot]);
            for &key in &keys {
                let elapsed = self.elapsed;
                let Some(timer) = self.timer_mut(key) else {
                    continue; // removed: a stale entry
                };
                if timer.deadline <= elapsed {
                    timer.fired = true;
                    fired.extend(timer.waker.take());
                } else {
                    let deadline = timer.deadline;
                    self.file(key, deadline);
                }
            }
            // Give the emptied slot its allocation back for reuse, unless it
            // is large (see `RETAINED_SLOT_CAPACITY`).
            let mut keys = keys;
            keys.clear();
            let slot_vec = &mut self.levels[level].slots[slot];
            if slot_vec.is_empty()
                && slot_vec.capacity() < keys.capacity()
                && keys.capacity() <= RETAINED_SLOT_CAPACITY
            {
                *slot_vec = keys;
            }
        }
        self.elapsed = self.elapsed.max(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    struct Counter(AtomicUsize);
    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> Waker {
        Waker::from(Arc::new(Counter(AtomicUsize::new(0))))
    }

    #[test]
    fn timers_fire_at_their_deadline_not_before() {
        let mut wheel = Wheel::new();
        let deadlines = [
            1u64, 2, 63, 64, 65, 100, 4095, 4096, 4097, 300_000, 10_000_000,
        ];
        let keys: Vec<_> = deadlines
            .iter()
            .map(|&d| wheel.insert(d, waker()).unwrap())
            .collect();
        let mut fired = Vec::new();
        for (i, &deadline) in deadlines.iter().enumerate() {
            wheel.advance(deadline - 1, &mut fired);
            assert!(!wheel.is_fired(keys[i]), "timer {deadline} fired early");
            wheel.advance(deadline, &mut fired);
            assert!(
                wheel.is_fired(keys[i]),
                "timer {deadline} did not fire at its deadline"
            );
            assert_eq!(fired.len(), i + 1);
        }
        assert_eq!(wheel.next_expiration(), None);
    }

    #[test]
    fn a_big_jump_fires_everything_due() {
        let mut wheel = Wheel::new();
        for deadline in 1..=10_000u64 {
            wheel.insert(deadline * 7, waker()).unwrap();
        }
        let mut fired = Vec::new();
        wheel.advance(35_000, &mut fired);
        assert_eq!(fired.len(), 5_000);
        wheel.advance(1_000_000, &mut fired);
        assert_eq!(fired.len(), 10_000);
    }

    #[test]
    fn emptied_slots_keep_small_allocations_only() {
        let mut wheel = Wheel::new();
        let total_capacity = |wheel: &Wheel| -> usize {
            let slots = wheel.levels.iter().flat_map(|level| level.slots.iter());
            slots.map(Vec::capacity).sum()
        };
        // A burst of 1,000 timers in one slot of level 1, then a few timers
        // in one slot of level 0: after both fire, only the small slot's
        // allocation is kept.
        for _ in 0..1_000 {
            wheel.insert(100, waker()).unwrap();
        }
        for _ in 0..3 {
            wheel.insert(10, waker()).unwrap();
        }
        let mut fired = Vec::new();
        wheel.advance(200, &mut fired);
        assert_eq!(fired.len(), 1_003);
        assert!(total_capacity(&wheel) <= RETAINED_SLOT_CAPACITY);
    }

    #[test]
    fn removed_timers_never_fire_and_slots_are_reused_safely() {
        let mut wheel = Wheel::new();
        let first = wheel.insert(50, waker()).unwrap();
        wheel.remove(first);
        // Same slab index, new generation.
        let second = wheel.insert(500, waker()).unwrap();
        assert_eq!(first.index, second.index);
        let mut fired = Vec::new();
        wheel.advance(100, &mut fired);
        assert!(fired.is_empty());
        assert!(!wheel.is_fired(second));
        wheel.advance(500, &mut fired);
        assert_eq!(fired.len(), 1);
    }

    #[test]
    fn next_expiration_is_never_after_the_earliest_deadline() {
        let mut wheel = Wheel::new();
        wheel.advance(1000, &mut Vec::new());
        for deadline in [1001u64, 1500, 5000, 70_000] {
            wheel.insert(deadline, waker()).unwrap();
        }
        let mut fired = Vec::new();
        while let Some(next) = wheel.next_expiration() {
            assert!(next > wheel.elapsed());
            wheel.advance(next, &mut fired);
        }
        assert_eq!(fired.len(), 4);
        assert!(wheel.insert(wheel.elapsed(), waker()).is_none());
    }

    #[test]
    fn close_fires_every_timer_and_stores_no_more() {
        let mut wheel = Wheel::new();
        let keys: Vec<_> = [5u64, 5000, 10_000_000]
            .iter()
            .map(|&d| wheel.insert(d, waker()).unwrap())
            .collect();
        wheel.remove(keys[1]);
        let mut fired = Vec::new();
        wheel.close(&mut fired);
        assert_eq!(
            fired.len(),
            2,
            "the two pending timers fire, the removed one not"
        );
        assert!(keys.iter().all(|&key| wheel.is_fired(key)));
        assert_eq!(wheel.next_expiration(), None);
        assert!(wheel.insert(1_000, waker()).is_none());
        wheel.advance(20_000_000, &mut fired);
        assert_eq!(fired.len(), 2, "nothing fires twice");
    }

    #[test]
    fn memory_returns_after_a_burst_of_cancelled_timers() {
        let mut wheel = Wheel::new();
        let survivor = wheel.insert(5, waker()).unwrap();
        let keys: Vec<_> = (0..10_000u64)
            .map(|i| wheel.insert(3_600_000 + i, waker()).unwrap())
            .collect();
        keys.iter().for_each(|&key| wheel.remove(key));
        wheel.remove(survivor);
        assert_eq!(wheel.len(), 0);
        assert!(
            wheel.timers.capacity() < 1_000,
            "the wheel keeps {} timer slots",
            wheel.timers.capacity()
        );
        let slot_capacity: usize = wheel
            .levels
            .iter()
            .flat_map(|level| level.slots.iter())
            .map(Vec::capacity)
            .sum();
        assert!(slot_capacity < 1_000, "slots keep {slot_capacity} keys");
        assert_eq!(wheel.next_expiration(), None, "no stale slot is reported");
        // The wheel goes on working, and old keys stay stale.
        let fresh = wheel.insert(10, waker()).unwrap();
        assert!(wheel.is_fired(keys[0]) && !wheel.is_fired(fresh));
        let mut fired = Vec::new();
        wheel.advance(10, &mut fired);
        assert_eq!(fired.len(), 1);
        assert!(wheel.is_fired(fresh));
    }
}
