//! The one place scheduler primitives come from.
//!
//! Every atomic, lock and condition variable that takes part in a park/wake or
//! queue-handoff protocol is imported from here, never from `std` directly, so
//! that building with `RUSTFLAGS="--cfg loom"` swaps them all for `loom`'s
//! model-checked versions. Plain statistics counters that no protocol reads
//! may use `std` atomics directly; they say so where they do.

#[cfg(loom)]
pub(crate) use loom::sync::{
    Condvar, Mutex, MutexGuard,
    atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering, fence},
};
#[cfg(not(loom))]
pub(crate) use std::sync::{
    Condvar, Mutex, MutexGuard,
    atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering, fence},
};

/// Locks `mutex`, ignoring poisoning.
///
/// No user code runs while the scheduler holds one of its locks, so a
/// poisoned lock can only come from a bug that already panicked elsewhere;
/// the data behind it is still consistent.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// A queue with the `crossbeam_deque::Injector` operations the scheduler
/// uses. Under loom it is a mutex around a `VecDeque`, so models can check
/// the protocols built on top of the queue (crossbeam's own algorithm is
/// assumed correct and is not what the models test).
#[cfg(loom)]
pub(crate) struct Injector<T>(Mutex<std::collections::VecDeque<T>>);

#[cfg(loom)]
impl<T> Injector<T> {
    pub(crate) fn new() -> Self {
        Injector(Mutex::new(std::collections::VecDeque::new()))
    }
    pub(crate) fn push(&self, value: T) {
        lock(&self.0).push_back(value);
    }
    pub(crate) fn pop(&self) -> Option<T> {
        lock(&self.0).pop_front()
    }
    pub(crate) fn is_empty(&self) -> bool {
        lock(&self.0).is_empty()
    }
    pub(crate) fn len(&self) -> usize {
        lock(&self.0).len()
    }
}

#[cfg(not(loom))]
pub(crate) use crossbeam_deque::Injector;

/// Pops one item from a `crossbeam_deque::Injector`, retrying while a
/// concurrent operation makes the steal report `Retry`.
#[cfg(not(loom))]
pub(crate) fn injector_pop<T>(injector: &Injector<T>) -> Option<T> {
    loop {
        match injector.steal() {
            crossbeam_deque::Steal::Success(value) => return Some(value),
            crossbeam_deque::Steal::Empty => return None,
            crossbeam_deque::Steal::Retry => std::hint::spin_loop(),
        }
    }
}

#[cfg(loom)]
pub(crate) fn injector_pop<T>(injector: &Injector<T>) -> Option<T> {
    injector.pop()
}
