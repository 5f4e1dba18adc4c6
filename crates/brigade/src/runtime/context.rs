//! What the current thread is to brigade: a worker (and of which runtime),
//! a thread inside `block_on`, a blocking-pool thread, or nothing.
//!
//! Three thread-locals, each set by an RAII guard that restores the previous
//! value when dropped:
//! - `HANDLE`: the runtime `brigade::spawn` uses. Set on workers, blocking
//!   threads and inside `block_on`.
//! - `WORKER`: the worker [`Core`] running on this thread, or null.
//! - `IDLE_WORD`: what `yield_if_busy()`'s fast path loads. On a worker it
//!   points at that runtime's idle/searching state word; everywhere else at
//!   [`NOT_A_WORKER`], a constant that reads as "a worker is idle", so the
//!   fast path is one TLS read, one load and one branch, with no null check.
//!   While a worker polls an elastic task it points at [`FORCE_SLOW_PATH`],
//!   a constant that reads as "no worker is idle", so every call reaches the
//!   slow path, where the task's CPU grant is checked.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::Handle;
use super::idle::IDLE_ONE;
use super::worker::Core;
use crate::metrics::long_poll::PollWatch;

/// Read by the fast path on threads that are not workers: one idle worker,
/// so `yield_if_busy()` completes at once. Never written.
static NOT_A_WORKER: AtomicUsize = AtomicUsize::new(IDLE_ONE);

thread_local! {
    static HANDLE: RefCell<Option<Handle>> = const { RefCell::new(None) };
    static IN_BLOCK_ON: Cell<bool> = const { Cell::new(false) };
    static WORKER: Cell<*const Core> = const { Cell::new(std::ptr::null()) };
    static IDLE_WORD: Cell<*const AtomicUsize> = const { Cell::new(&NOT_A_WORKER) };
    static POLL_WATCH: Cell<*const PollWatch> = const { Cell::new(std::ptr::null()) };
}

/// `true` if `yield_if_busy()` can return at once: this thread is not a
/// worker, or one of its runtime's workers is idle.
#[inline(always)]
pub(crate) fn any_worker_idle() -> bool {
    let word = IDLE_WORD.with(Cell::get);
    // SAFETY: `IDLE_WORD` points either at one of the statics
    // `NOT_A_WORKER` and `FORCE_SLOW_PATH`, or at the state word inside the `Shared` of the runtime this worker thread
    // belongs to; `WorkerGuard` resets it before the worker's `Core` (which
    // owns an `Arc<Shared>`) is dropped, so the pointee is alive. Relaxed:
    // the value is a hint (see `yield_if_busy`'s docs); a stale read costs at
    // most one needless slow path or one missed yield.
    unsafe { (*word).load(Ordering::Relaxed) >= IDLE_ONE }
}

/// Tells the long-poll detector that the running task reached a yield
/// point, so the stretch it measures restarts (`yield_if_busy()` calls this
/// when it lets the task continue). One TLS read and, on a worker with the
/// detector on, two plain memory operations on that worker's own watch.
#[inline(always)]
pub(crate) fn note_yield_point() {
    let watch = POLL_WATCH.with(Cell::get);
    if !watch.is_null() {
        // SAFETY: a non-null `POLL_WATCH` points at the watch of this
        // worker, inside the metrics of the `Shared` its `Core` keeps alive;
        // `WorkerGuard` resets it before that `Core` is dropped (as for
        // `IDLE_WORD`).
        unsafe { (*watch).yield_point() }
    }
}

/// Read by the fast path while a worker polls an elastic task: "no worker
/// idle", so `yield_if_busy()` always reaches the slow path, which checks the
/// task's CPU grant. Never written.
static FORCE_SLOW_PATH: AtomicUsize = AtomicUsize::new(0);

/// While alive, `yield_if_busy()` on this thread skips its fast path.
pub(crate) struct SlowPathGuard {
    previous: *const AtomicUsize,
}

/// Makes `yield_if_busy()` take its slow path until the guard is dropped
/// (used around polls of elastic tasks).
pub(crate) fn force_yield_slow_path() -> SlowPathGuard {
    SlowPathGuard {
        previous: IDLE_WORD.with(|word| word.replace(&FORCE_SLOW_PATH)),
    }
}

impl Drop for SlowPathGuard {
    fn drop(&mut self) {
        IDLE_WORD.with(|word| word.set(self.previous));
    }
}

/// Runs `f` with the worker core running on this thread, if any.
pub(crate) fn with_current_worker<R>(f: impl FnOnce(Option<&Core>) -> R) -> R {
    let core = WORKER.with(Cell::get);
    // SAFETY: `WORKER` is non-null only between `enter_worker` and the drop
    // of its guard, while the `Core` it points to is borrowed by the worker
    // loop on this very thread (so it is alive and not moved). `Core` is only
    // used through `&` and its mutable state is in `Cell`s.
    f(unsafe { core.as_ref() })
}

/// A clone of the current runtime's handle, if this thread is in one.
pub(crate) fn try_current() -> Option<Handle> {
    HANDLE.with(|handle| handle.borrow().clone())
}

/// Runs `f` with the current runtime's handle, or panics with `misuse`.
#[track_caller]
pub(crate) fn with_current<R>(what: &str, f: impl FnOnce(&Handle) -> R) -> R {
    HANDLE.with(|handle| match &*handle.borrow() {
        Some(handle) => f(handle),
        None => panic!(
            "{what} called outside of a brigade runtime: call it from a task, from inside \
             `Runtime::block_on`, or from a `spawn_blocking` closure; or keep a \
             `brigade::Handle` and call the method of the same name on it"
        ),
    })
}

/// Restores the thread's previous context when dropped.
pub(crate) struct ContextGuard {
    previous_handle: Option<Handle>,
    previous_in_block_on: bool,
    previous_worker: *const Core,
    previous_idle_word: *const AtomicUsize,
    previous_poll_watch: *const PollWatch,
}

impl Drop for ContextGuard {
    fn drop(&mut self) {
        WORKER.with(|worker| worker.set(self.previous_worker));
        IDLE_WORD.with(|word| word.set(self.previous_idle_word));
        POLL_WATCH.with(|watch| watch.set(self.previous_poll_watch));
        IN_BLOCK_ON.with(|flag| flag.set(self.previous_in_block_on));
        let previous = self.previous_handle.take();
        HANDLE.with(|handle| *handle.borrow_mut() = previous);
    }
}

fn enter(
    handle: Handle,
    in_block_on: bool,
    worker: *const Core,
    idle_word: *const AtomicUsize,
    poll_watch: *const PollWatch,
) -> ContextGuard {
    ContextGuard {
        previous_handle: HANDLE.with(|current| current.borrow_mut().replace(handle)),
        previous_in_block_on: IN_BLOCK_ON.with(|flag| flag.replace(in_block_on)),
        previous_worker: WORKER.with(|current| current.replace(worker)),
        previous_idle_word: IDLE_WORD.with(|current| current.replace(idle_word)),
        previous_poll_watch: POLL_WATCH.with(|current| current.replace(poll_watch)),
    }
}

/// Makes this thread the worker running `core`. The guard must be dropped
/// before `core` is.
pub(crate) fn enter_worker(core: &Core) -> ContextGuard {
    let handle = core.handle();
    let shared = &handle.shared;
    let idle_word: *const AtomicUsize = shared.idle.state_word();
    let poll_watch: *const PollWatch = match shared.config.long_poll_threshold {
        Some(_) => &shared.metrics.worker(core.index()).watch,
        None => std::ptr::null(),
    };
    enter(handle, false, core, idle_word, poll_watch)
}

/// Makes `handle` current on a blocking-pool thread.
pub(crate) fn enter_blocking(handle: Handle) -> ContextGuard {
    enter(
        handle,
        false,
        std::ptr::null(),
        &NOT_A_WORKER,
        std::ptr::null(),
    )
}

/// Makes `handle` current on a thread entering `block_on`.
///
/// # Panics
/// If the thread is a worker or already inside `block_on`: blocking there
/// would stall the worker (or deadlock a runtime waiting on itself).
#[track_caller]
pub(crate) fn enter_block_on(handle: Handle) -> ContextGuard {
    if !WORKER.with(Cell::get).is_null() || IN_BLOCK_ON.with(Cell::get) {
        panic!(
            "cannot call `block_on` from inside a brigade runtime: this thread is already \
             driving async code (a worker thread or another `block_on`), and blocking it \
             would stall or deadlock the runtime. `.await` the future instead, or use \
             `brigade::spawn_blocking` to run blocking code"
        );
    }
    enter(
        handle,
        true,
        std::ptr::null(),
        &NOT_A_WORKER,
        std::ptr::null(),
    )
}
