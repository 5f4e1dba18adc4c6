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

use std::time::{Duration, Instant};

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

/// Waits on `condvar`, ignoring poisoning (see [`lock`]).
pub(crate) fn wait<'a, T>(condvar: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    match condvar.wait(guard) {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Waits on `condvar` for at most `timeout`, ignoring poisoning (see
/// [`lock`]); the flag says whether the wait timed out. Under loom the wait
/// never times out: loom models no time, only notifications.
pub(crate) fn wait_timeout<'a, T>(
    condvar: &Condvar,
    guard: MutexGuard<'a, T>,
    timeout: Duration,
) -> (MutexGuard<'a, T>, bool) {
    match condvar.wait_timeout(guard, timeout) {
        Ok((guard, result)) => (guard, result.timed_out()),
        Err(poisoned) => {
            let (guard, result) = poisoned.into_inner();
            (guard, result.timed_out())
        }
    }
}

/// Waits on `condvar` until `done` holds for the guarded value or
/// `deadline` (if any) passes; the flag is `true` when the deadline passed
/// first.
///
/// `done` is checked before each wait, so a condition that already holds
/// returns at once, and a notification is never needed to see it.
pub(crate) fn wait_until<'a, T>(
    condvar: &Condvar,
    mut guard: MutexGuard<'a, T>,
    deadline: Option<Instant>,
    mut done: impl FnMut(&T) -> bool,
) -> (MutexGuard<'a, T>, bool) {
    while !done(&guard) {
        let Some(deadline) = deadline else {
            guard = wait(condvar, guard);
            continue;
        };
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return (guard, true);
        }
        guard = wait_timeout(condvar, guard, remaining).0;
    }
    (guard, false)
}

/// The work-stealing queues: crossbeam's, or their loom stand-ins
/// (`loom_deque.rs`), which keep crossbeam's orderings and fences and add
/// no lock. Crossbeam calls the owner's end of a deque `Worker`; here it is
/// [`LocalQueue`], since brigade's worker is `runtime::worker::Core`.
#[cfg(not(loom))]
pub(crate) mod deque {
    pub(crate) use crossbeam_deque::{Injector, Steal, Stealer, Worker as LocalQueue};
}
#[cfg(loom)]
#[path = "loom_deque.rs"]
pub(crate) mod deque;

pub(crate) use deque::{Injector, LocalQueue};

mod scoped;
pub(crate) use scoped::Scoped;

/// Threads that take part in the scheduler's protocols: the workers and
/// `block_on`'s thread (its `park`/`unpark`).
#[cfg(loom)]
pub(crate) use loom::thread;
#[cfg(not(loom))]
pub(crate) use std::thread;

/// A spin-loop hint; under loom it lets the model run another thread.
#[cfg(loom)]
pub(crate) use loom::hint::spin_loop;
#[cfg(not(loom))]
pub(crate) use std::hint::spin_loop;

/// Declares the scheduler's thread-locals: `std`'s with `const`
/// initialisers, or, under loom, loom's (one value per modelled thread).
macro_rules! scheduler_thread_local {
    ($(static $name:ident: $t:ty = $init:expr;)*) => {
        #[cfg(not(loom))]
        std::thread_local! { $(static $name: $t = const { $init };)* }
        #[cfg(loom)]
        loom::thread_local! { $(static $name: $t = $init;)* }
    };
}
pub(crate) use scheduler_thread_local;

/// Module-level items that exist only in the loom build (`--cfg loom`),
/// as tokio's `cfg_loom!`: a run of such items is one block, so a reader
/// sees at once what the models swap in. A single item, a field, a
/// statement and a `mod` declaration (so that rustfmt still finds its
/// file) keep the plain `#[cfg(loom)]`.
macro_rules! cfg_loom {
    ($($item:item)*) => { $( #[cfg(loom)] $item )* };
}
pub(crate) use cfg_loom;

/// Module-level items that exist only outside the loom build: the
/// counterpart of [`cfg_loom!`], as tokio's `cfg_not_loom!`.
macro_rules! cfg_not_loom {
    ($($item:item)*) => { $( #[cfg(not(loom))] $item )* };
}
pub(crate) use cfg_not_loom;

/// Pops one item from an injector, retrying while a concurrent operation
/// makes the steal report `Retry`.
pub(crate) fn injector_pop<T>(injector: &Injector<T>) -> Option<T> {
    loop {
        match injector.steal() {
            deque::Steal::Success(value) => return Some(value),
            deque::Steal::Empty => return None,
            deque::Steal::Retry => spin_loop(),
        }
    }
}
