//! `crossbeam_deque`'s `Worker` (FIFO; `LocalQueue` here), `Stealer` and
//! `Injector`, for loom models of the real scheduler.
//!
//! crossbeam's queues use `std` atomics, which loom cannot see, and a model
//! must not stand them in with a lock: a lock would order every push with
//! every later look at the queue, which the real queues do not, and hide
//! exactly the races the scheduler's fences exist for. So these are
//! lock-free rings of loom atomics that perform crossbeam-deque 0.8's index
//! operations with its orderings and fences:
//!
//! | operation | crossbeam (and here) |
//! |---|---|
//! | `Worker::push` | `front` Acquire; write the slot; `fence(Release)`; `back` store Relaxed |
//! | `Worker::pop` (FIFO) | `back`, `front` Relaxed; `front.fetch_add(1, SeqCst)` |
//! | `Worker::is_empty`, `len` | `back` Relaxed, `front` SeqCst |
//! | `Stealer::is_empty` | `front` Acquire; `fence(SeqCst)`; `back` Acquire |
//! | `Stealer::steal_batch_and_pop` | `front` Acquire; `fence(SeqCst)` (epoch pin); `back` Acquire; `front` CAS SeqCst; half the tasks |
//! | `Injector::push` | write the slot; mark it written (Release); `tail` RMW SeqCst (see below) |
//! | `Injector::steal`, `steal_batch_and_pop` | `head` Acquire; `fence(SeqCst)`; `tail` Relaxed (Acquire here, see below); `head` CAS SeqCst; the slot's mark (Acquire); half the tasks |
//! | `Injector::is_empty`, `len` | `head`, `tail` SeqCst |
//!
//! Slots are loom `UnsafeCell`s, so loom also checks that every task is
//! published to whoever takes it. Left out: crossbeam's buffer growth,
//! block lists and epoch-based reclamation (its own business, tested by
//! crossbeam): a ring here never wraps, and holds at most [`CAPACITY`]
//! pushes over its life, plenty for a model. A batch steal takes its tasks
//! after winning the index rather than before (crossbeam reads first and
//! forgets them on a lost race, which only matters for reuse of slots).
//!
//! One reordering: crossbeam's `Injector::push` moves `tail` on (its SeqCst
//! RMW) before it writes the slot, and a taker that wins that index spins
//! until the write lands. Here the push writes first and then moves `tail`
//! on with the same RMW (pushers take turns under a lock that only they
//! take, as their CASes on `tail` order them in crossbeam), so no taker
//! ever waits: the push takes effect, for
//! `is_empty` and for takers alike, at that RMW in both. A taker therefore
//! loads `tail` with `Acquire`, where crossbeam's taker acquires the
//! pusher's writes from the slot's state after its wait: the same edge. The spin would
//! only add executions in which loom, which schedules threads that spin
//! (yield) unfairly, starves the pusher for ever.

use std::mem::MaybeUninit;

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};
use loom::sync::{Arc, Mutex};

/// Pushes a ring takes over its life.
pub(crate) const CAPACITY: usize = 64;

/// What a steal found, as `crossbeam_deque::Steal`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Steal<T> {
    Empty,
    Success(T),
    Retry,
}

/// Write-once slots.
struct Slots<T> {
    cells: Box<[UnsafeCell<MaybeUninit<T>>]>,
}

// SAFETY: the deque and the injector that own slots access them only as
// their index protocols allow (each index written once by the one thread
// that was handed it, and taken once by the one that won it, after the
// write was published), and values move between threads only when
// `T: Send`.
unsafe impl<T: Send> Send for Slots<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Slots<T> {}

impl<T> Slots<T> {
    fn new() -> Self {
        Slots {
            cells: (0..CAPACITY)
                .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
                .collect(),
        }
    }

    /// Writes slot `index`, which nobody has written yet.
    fn write(&self, index: usize, value: T) {
        assert!(
            index < CAPACITY,
            "a loom deque took more than {CAPACITY} pushes"
        );
        // SAFETY: each index is handed out once (by the owner's `back` or
        // the injector's `tail`), so nobody else accesses the slot until
        // the index is published.
        self.cells[index].with_mut(|slot| unsafe { (*slot).write(value) });
    }

    /// Takes the value out of slot `index`, written and published earlier.
    fn take(&self, index: usize) -> T {
        // SAFETY: the caller won the index (a CAS or the owner's pop), so
        // it alone takes this slot, once, after its write was published.
        self.cells[index].with(|slot| unsafe { (*slot).assume_init_read() })
    }
}

/// A FIFO worker deque: the owner pushes and pops, stealers take batches.
struct Deque<T> {
    front: AtomicUsize,
    back: AtomicUsize,
    slots: Slots<T>,
}

impl<T> Drop for Deque<T> {
    fn drop(&mut self) {
        let (front, back) = (self.front.with_mut(|v| *v), self.back.with_mut(|v| *v));
        for index in front..back {
            drop(self.slots.take(index));
        }
    }
}

/// The owner's end of a deque (a worker's local queue), as
/// `crossbeam_deque::Worker` (FIFO only).
pub(crate) struct LocalQueue<T> {
    deque: Arc<Deque<T>>,
}

/// A thief's end of a deque, as `crossbeam_deque::Stealer`.
pub(crate) struct Stealer<T> {
    deque: Arc<Deque<T>>,
}

impl<T> Clone for Stealer<T> {
    fn clone(&self) -> Self {
        Stealer {
            deque: self.deque.clone(),
        }
    }
}

impl<T> LocalQueue<T> {
    pub(crate) fn new_fifo() -> Self {
        LocalQueue {
            deque: Arc::new(Deque {
                front: AtomicUsize::new(0),
                back: AtomicUsize::new(0),
                slots: Slots::new(),
            }),
        }
    }

    pub(crate) fn stealer(&self) -> Stealer<T> {
        Stealer {
            deque: self.deque.clone(),
        }
    }

    pub(crate) fn push(&self, value: T) {
        self.push_batch(std::iter::once(value));
    }

    /// Writes `values` at the back, then publishes them with one store.
    fn push_batch(&self, values: impl IntoIterator<Item = T>) {
        let deque = &*self.deque;
        let mut back = deque.back.load(Ordering::Relaxed);
        let _ = deque.front.load(Ordering::Acquire);
        let first = back;
        for value in values {
            deque.slots.write(back, value);
            back += 1;
        }
        if back != first {
            fence(Ordering::Release);
            deque.back.store(back, Ordering::Relaxed);
        }
    }

    pub(crate) fn pop(&self) -> Option<T> {
        let deque = &*self.deque;
        let back = deque.back.load(Ordering::Relaxed);
        let front = deque.front.load(Ordering::Relaxed);
        if back <= front {
            return None;
        }
        let front = deque.front.fetch_add(1, Ordering::SeqCst);
        if back < front + 1 {
            deque.front.store(front, Ordering::Relaxed);
            return None;
        }
        Some(deque.slots.take(front))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn len(&self) -> usize {
        let back = self.deque.back.load(Ordering::Relaxed);
        let front = self.deque.front.load(Ordering::SeqCst);
        back.saturating_sub(front)
    }
}

impl<T> Stealer<T> {
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many tasks the deque holds, with crossbeam's orderings (a
    /// snapshot: the owner and other stealers may change it at once).
    pub(crate) fn len(&self) -> usize {
        let front = self.deque.front.load(Ordering::Acquire);
        fence(Ordering::SeqCst);
        let back = self.deque.back.load(Ordering::Acquire);
        back.saturating_sub(front)
    }

    /// Steals about half the tasks: the first is returned, the rest go to
    /// the back of `dest`.
    pub(crate) fn steal_batch_and_pop(&self, dest: &LocalQueue<T>) -> Steal<T> {
        let deque = &*self.deque;
        let front = deque.front.load(Ordering::Acquire);
        // crossbeam pins the epoch here, which is a `SeqCst` fence.
        fence(Ordering::SeqCst);
        let back = deque.back.load(Ordering::Acquire);
        if back <= front {
            return Steal::Empty;
        }
        let extra = (back - front - 1) / 2;
        if deque
            .front
            .compare_exchange(
                front,
                front + 1 + extra,
                Ordering::SeqCst,
                Ordering::Relaxed,
            )
            .is_err()
        {
            return Steal::Retry;
        }
        let first = deque.slots.take(front);
        dest.push_batch((front + 1..front + 1 + extra).map(|index| deque.slots.take(index)));
        Steal::Success(first)
    }
}

/// The runtime-wide queue, as `crossbeam_deque::Injector`.
pub(crate) struct Injector<T> {
    head: AtomicUsize,
    /// Indices below it are published.
    tail: AtomicUsize,
    /// Orders pushers with each other, as their `tail` CASes do in
    /// crossbeam (each reads the last one's); takers and `is_empty` never
    /// take it.
    push_lock: Mutex<()>,
    slots: Slots<T>,
    /// Set (Release) once a slot's value is written, before its index is
    /// published; a taker reads it (Acquire) before the slot.
    written: Box<[AtomicBool]>,
}

impl<T> Drop for Injector<T> {
    fn drop(&mut self) {
        let (head, tail) = (self.head.with_mut(|v| *v), self.tail.with_mut(|v| *v));
        for index in head..tail {
            drop(self.slots.take(index));
        }
    }
}

impl<T> Injector<T> {
    pub(crate) fn new() -> Self {
        Injector {
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
            push_lock: Mutex::new(()),
            slots: Slots::new(),
            written: (0..CAPACITY).map(|_| AtomicBool::new(false)).collect(),
        }
    }

    pub(crate) fn push(&self, value: T) {
        let _pushers = super::lock(&self.push_lock);
        let index = self.tail.load(Ordering::Relaxed);
        self.slots.write(index, value);
        self.written[index].store(true, Ordering::Release);
        self.tail.fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn steal(&self) -> Steal<T> {
        match self.claim(|_| 1) {
            Ok(head) => Steal::Success(self.take(head)),
            Err(steal) => steal,
        }
    }

    /// Steals about half the tasks: the first is returned, the rest go to
    /// the back of `dest`.
    pub(crate) fn steal_batch_and_pop(&self, dest: &LocalQueue<T>) -> Steal<T> {
        let mut taken = 0;
        let head = match self.claim(|len| {
            taken = len.div_ceil(2);
            taken
        }) {
            Ok(head) => head,
            Err(steal) => return steal,
        };
        let first = self.take(head);
        dest.push_batch((head + 1..head + taken).map(|index| self.take(index)));
        Steal::Success(first)
    }

    /// Wins `count(len)` indices from the head; returns the first.
    fn claim(&self, count: impl FnOnce(usize) -> usize) -> Result<usize, Steal<T>> {
        let head = self.head.load(Ordering::Acquire);
        fence(Ordering::SeqCst);
        // Acquire where crossbeam's is Relaxed: crossbeam's taker acquires
        // the pusher's writes through the slot's state instead (after its
        // spin, see the module docs), which is the same edge.
        let tail = self.tail.load(Ordering::Acquire);
        if tail <= head {
            return Err(Steal::Empty);
        }
        let count = count(tail - head);
        self.head
            .compare_exchange(head, head + count, Ordering::SeqCst, Ordering::Acquire)
            .map_err(|_| Steal::Retry)
    }

    /// Takes the value of a won (so published, so written) index.
    fn take(&self, index: usize) -> T {
        assert!(
            self.written[index].load(Ordering::Acquire),
            "a published injector slot was not written"
        );
        self.slots.take(index)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn len(&self) -> usize {
        let head = self.head.load(Ordering::SeqCst);
        let tail = self.tail.load(Ordering::SeqCst);
        tail.saturating_sub(head)
    }
}

#[cfg(test)]
#[path = "loom_deque/loom_models.rs"]
mod loom_models;
