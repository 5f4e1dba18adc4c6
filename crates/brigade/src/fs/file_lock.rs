//! The lock behind `File`'s `&self` methods that wait for its operation in
//! flight (`sync_all`, `sync_data`, `set_len`): tokio takes `&self` there,
//! so two tasks may call them on one file at once.
//!
//! ## Protocol
//! The value sits in a std mutex, held only inside one poll, never across
//! an await (the futures stay `Send`). On top of it, `held` makes one
//! future at a time the owner across its awaits: only the owner polls the
//! file's operation in flight, whose `JoinHandle` keeps one waker, so no
//! other task's waker can be lost there. A future that finds the lock held
//! leaves its waker in `waiters`; the release wakes all of them, and they
//! race for the lock again. Waking all makes cancellation harmless: a
//! waiter dropped before its turn takes no wake-up from another.
//!
//! `&mut self` methods (the I/O traits) reach the value with
//! [`get_mut`](FileLock::get_mut): a `&mut File` cannot coexist with a
//! guard, which borrows the `File`.

use std::future::poll_fn;
use std::sync::Mutex;
use std::task::{Poll, Waker};

use crate::sync::lock;

pub(super) struct FileLock<T> {
    slot: Mutex<Slot<T>>,
}

struct Slot<T> {
    value: T,
    held: bool,
    waiters: Vec<Waker>,
}

/// Ownership of the lock, from [`FileLock::acquire`] until dropped.
pub(super) struct FileGuard<'a, T> {
    lock: &'a FileLock<T>,
}

impl<T> FileLock<T> {
    pub(super) fn new(value: T) -> Self {
        FileLock {
            slot: Mutex::new(Slot {
                value,
                held: false,
                waiters: Vec::new(),
            }),
        }
    }

    /// The value, through exclusive access to the lock.
    pub(super) fn get_mut(&mut self) -> &mut T {
        let slot = match self.slot.get_mut() {
            Ok(slot) => slot,
            Err(poisoned) => poisoned.into_inner(),
        };
        &mut slot.value
    }

    /// Waits until the lock is free and takes it.
    pub(super) async fn acquire(&self) -> FileGuard<'_, T> {
        poll_fn(|cx| {
            let mut slot = lock(&self.slot);
            if !slot.held {
                slot.held = true;
                return Poll::Ready(FileGuard { lock: self });
            }
            if !slot.waiters.iter().any(|w| w.will_wake(cx.waker())) {
                slot.waiters.push(cx.waker().clone());
            }
            Poll::Pending
        })
        .await
    }

    /// The value, consumed with the lock (no guard can be alive).
    pub(super) fn into_inner(self) -> T {
        match self.slot.into_inner() {
            Ok(slot) => slot.value,
            Err(poisoned) => poisoned.into_inner().value,
        }
    }
}

impl<T> FileGuard<'_, T> {
    /// Runs `f` on the value (the std mutex is held while `f` runs: `f`
    /// must not block).
    pub(super) fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut lock(&self.lock.slot).value)
    }
}

impl<T> Drop for FileGuard<'_, T> {
    fn drop(&mut self) {
        let waiters = {
            let mut slot = lock(&self.lock.slot);
            slot.held = false;
            std::mem::take(&mut slot.waiters)
        };
        waiters.into_iter().for_each(Waker::wake);
    }
}
