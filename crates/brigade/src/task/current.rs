//! What a task's poll sees of the thread it runs on: its own header and
//! waker, and the worker running it. The thread's runtime, its idle word
//! and its long-poll record are the scheduler's (`runtime/context.rs`).
//!
//! Every thread-local here is set for the duration of a closure and
//! restored when it returns or unwinds (`Scoped`, `sync/scoped.rs`):
//! - `WORKER`: the worker running on this thread, set by the scheduler
//!   around the worker loop (`runtime/context.rs`'s `run_worker`), which
//!   borrows it. An opaque pointer (a [`Worker`] trait object): the task
//!   layer sits below the worker loop and names no type of it; the loop
//!   reads its own `Core` back through `worker::with_current`.
//! - `CURRENT_TASK` and `TASK_WAKER`: the header and the waker of the task
//!   being polled, set by the task's own harness around the poll of the
//!   user's future ([`poll_task`]), so a `&TaskMeta` exists only while that
//!   poll runs. On a current-thread runtime `TASK_WAKER` alone is also set
//!   around the polls of the `block_on` future ([`poll_main`]), for the
//!   cooperative budget's test of whose waker it wakes ([`is_own_waker`]).

use std::cell::Cell;
use std::ptr::NonNull;
use std::task::Waker;

use super::TaskMeta;
use crate::sync::Scoped;

crate::sync::scheduler_thread_local! {
    static WORKER: WorkerSlot = WorkerSlot::unset();
    static CURRENT_TASK: Scoped<TaskMeta> = Scoped::unset();
    static TASK_WAKER: Scoped<Waker> = Scoped::unset();
}

#[cfg(all(feature = "tokio-compat", not(loom)))]
std::thread_local! {
    /// Whether this thread is one of the tokio-compat runtime's, where the
    /// cooperative budget is tokio's (`coop.rs`). Set for the thread's
    /// whole life by tokio's start and stop hooks (`runtime/context.rs`'s
    /// `enter_compat_thread`), which scope nothing.
    static ON_COMPAT_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is a tokio-compat thread.
#[cfg(all(feature = "tokio-compat", not(loom)))]
#[inline]
pub(crate) fn on_compat_thread() -> bool {
    ON_COMPAT_THREAD.with(Cell::get)
}

/// Marks this thread as a tokio-compat thread, or no longer one.
#[cfg(all(feature = "tokio-compat", not(loom)))]
pub(crate) fn set_compat_thread(on: bool) {
    ON_COMPAT_THREAD.with(|flag| flag.set(on));
}

/// What a task's poll may ask of the worker running it: the worker loop's
/// `Core` implements it, and is the only type that does
/// (`runtime/worker`'s `with_current` relies on that).
pub(crate) trait Worker: std::any::Any {
    /// Runs `f`, which may block, with a spare worker serving in this one's
    /// place meanwhile (`task::block_in_place`).
    fn block_in_place(&self, f: &mut dyn FnMut());

    /// The running poll has spent its cooperative budget (`task/coop.rs`):
    /// whether work waits for this worker or, `local_set` being
    /// `Some(waits)`, on the `LocalSet` running the task
    /// (`Core::budget_work_waits`). Marks nothing.
    fn budget_work_waits(&self, local_set: Option<bool>) -> bool;

    /// The budget makes the running poll yield: the worker counts it and,
    /// for a task of its own (not a `LocalSet`'s), takes the task's coming
    /// self-wake for the budget's (`Core::budget_yield`).
    fn budget_yield(&self, in_local_set: bool);
}

/// The thread-local pointer to the running worker (see the module docs):
/// as `Scoped` (`sync/scoped.rs`), for a trait object.
struct WorkerSlot {
    inner: Cell<Option<NonNull<dyn Worker>>>,
}

impl WorkerSlot {
    const fn unset() -> Self {
        WorkerSlot {
            inner: Cell::new(None),
        }
    }

    /// Points at `worker` while `f` runs, then restores the previous value,
    /// also when `f` unwinds.
    #[inline]
    fn set<R>(&self, worker: &(dyn Worker + 'static), f: impl FnOnce() -> R) -> R {
        struct Reset<'a> {
            cell: &'a Cell<Option<NonNull<dyn Worker>>>,
            previous: Option<NonNull<dyn Worker>>,
        }
        impl Drop for Reset<'_> {
            fn drop(&mut self) {
                self.cell.set(self.previous);
            }
        }
        let _reset = Reset {
            previous: self.inner.replace(Some(NonNull::from(worker))),
            cell: &self.inner,
        };
        f()
    }

    /// Runs `f` with the worker, if one is set.
    #[inline]
    fn with<R>(&self, f: impl FnOnce(Option<&dyn Worker>) -> R) -> R {
        // SAFETY: as in `Scoped::with`: the pointer is `None` or the
        // `worker` of a `set` on this thread whose frame encloses this call.
        f(self.inner.get().map(|worker| unsafe { worker.as_ref() }))
    }
}

/// Runs `f` with the worker running on this thread, if any (the loop
/// itself reads its `Core` through `worker::with_current`).
#[inline]
pub(crate) fn with_worker<R>(f: impl FnOnce(Option<&dyn Worker>) -> R) -> R {
    WORKER.with(|worker| worker.with(f))
}

/// Runs `f`, the worker loop, with `worker` the worker running on this
/// thread (`runtime/context.rs`'s `run_worker`).
pub(crate) fn set_worker<R>(worker: &(dyn Worker + 'static), f: impl FnOnce() -> R) -> R {
    WORKER.with(|current| current.set(worker, f))
}

/// Whether a worker loop runs on this thread.
pub(crate) fn on_worker() -> bool {
    with_worker(|worker| worker.is_some())
}

/// Polls a task: makes `meta` the current task, and `waker` (the one its
/// scheduler polls it with) its waker, while `f` runs. Called by the task's
/// harness around the poll of the user's future, so the task is alive for
/// all of it.
#[inline]
pub(crate) fn poll_task<R>(meta: &TaskMeta, waker: &Waker, f: impl FnOnce() -> R) -> R {
    CURRENT_TASK.with(|task| task.set(meta, || TASK_WAKER.with(|own| own.set(waker, f))))
}

/// Makes `waker` the waker of the `block_on` future being polled on a
/// current-thread runtime while `f` runs (no task is current then).
pub(crate) fn poll_main<R>(waker: &Waker, f: impl FnOnce() -> R) -> R {
    TASK_WAKER.with(|own| own.set(waker, f))
}

/// Whether `waker` wakes the task being polled here (or the `block_on`
/// future of a current-thread runtime): not a combinator's or a nested
/// executor's.
pub(crate) fn is_own_waker(waker: &Waker) -> bool {
    TASK_WAKER.with(|own| own.with(|own| own.is_some_and(|own| own.will_wake(waker))))
}

/// The running poll spent its cooperative budget: whether work waits for
/// this thread's worker or on the task's `LocalSet`
/// (`Worker::budget_work_waits`); off a worker, only the set's own tasks
/// can wait behind the poll.
pub(crate) fn budget_work_waits(local_set: Option<bool>) -> bool {
    with_worker(|worker| match worker {
        Some(worker) => worker.budget_work_waits(local_set),
        None => local_set == Some(true),
    })
}

/// The budget makes the running poll yield (`Worker::budget_yield`).
pub(crate) fn budget_yield(in_local_set: bool) {
    with_worker(|worker| {
        if let Some(worker) = worker {
            worker.budget_yield(in_local_set);
        }
    });
}

/// Runs `f` with the header and the waker of the task being polled on this
/// thread, if a task's poll is running here.
pub(crate) fn with_current_task<R>(f: impl FnOnce(Option<(&TaskMeta, &Waker)>) -> R) -> R {
    CURRENT_TASK
        .with(|task| task.with(|meta| TASK_WAKER.with(|own| own.with(|waker| f(meta.zip(waker))))))
}
