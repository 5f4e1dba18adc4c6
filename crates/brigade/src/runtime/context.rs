//! What the current thread is to brigade: a worker (and of which runtime),
//! a thread inside `block_on`, a blocking-pool thread, or nothing; and,
//! during a poll, which task is being polled.
//!
//! The task's own part of it (its header and waker during a poll, and the
//! worker running it) is the task layer's: `task/current.rs`, re-exported
//! here for the scheduler.
//!
//! ## Scoped by construction
//! Every thread-local here is set for the duration of a closure and
//! restored when the closure returns or unwinds (the pointers are `Scoped`,
//! `sync/scoped.rs`), so nothing can outlive what it points to.
//! - `IDLE_WORD`: what `yield_if_busy()`'s fast path loads. On a worker it
//!   points at that runtime's idle state word (see `idle.rs`); everywhere
//!   else at [`NOT_A_WORKER`], a constant that reads as "a worker is idle",
//!   so the fast path's test is one TLS read, one load and one compare,
//!   with no null check (its note to the long-poll detector, `POLL_RECORD`,
//!   is one more TLS read). While a worker polls an elastic task it points at
//!   [`FORCE_SLOW_PATH`], a constant that reads as "no worker is idle", so
//!   every call reaches the slow path, where the task's CPU grant is checked.
//!   Under loom (whose atomics cannot live in a `static`) the fast path
//!   reads the worker's idle word through `LOOM_IDLE_WORD` instead, and
//!   `SLOW_PATH_FORCED` stands in for the constant: the same load of the
//!   same word, one more pointer away.
//! - `POLL_RECORD`: this worker's long-poll record, or null.
//! - `HANDLE` (an owned clone) and `IN_BLOCK_ON`: the runtime
//!   `brigade::spawn` uses, and whether `block_on` is running here.
//!   `HANDLE` mirrors the innermost entry of the thread's stack of entered
//!   runtimes (`enter.rs`), where scoped entries (`with_handle`) and
//!   `Handle::enter`'s guards meet.
//!
//! One exception, feature `tokio-compat`: tokio offers hooks at a thread's
//! start and stop, not a closure around its life, so its compat threads
//! ([`enter_compat_thread`]) set `HANDLE` (an owned clone) and point
//! `IDLE_WORD` at the static [`COMPAT_THREAD`] for the rest of the thread.
//! Neither points into a stack frame, so nothing can dangle.

use std::cell::{Cell, RefCell};
crate::sync::cfg_not_loom! {
    use std::sync::Arc;

    use crate::driver::Driver;
}
use crate::metrics::long_poll::PollRecord;
use crate::runtime::handle::Handle;
use crate::runtime::scheduler::idle;
use crate::sync::Scoped;
use crate::task::current;
pub(crate) use crate::task::current::{
    Worker, on_worker, poll_main, with_current_task, with_worker,
};

crate::sync::cfg_not_loom! {
    /// Read by the fast path on threads that are not workers: one idle worker,
    /// so `yield_if_busy()` completes at once. Never written.
    static NOT_A_WORKER: AtomicUsize = AtomicUsize::new(idle::IDLE_ONE);

    /// Read by the fast path while a worker polls an elastic task: "no worker
    /// idle", so `yield_if_busy()` always reaches the slow path, which checks the
    /// task's CPU grant. Never written.
    static FORCE_SLOW_PATH: AtomicUsize = AtomicUsize::new(0);
}

/// Read by the fast path on a tokio-compat thread: "no worker idle", so
/// `yield_if_busy()` reaches the slow path, which spends tokio's budget
/// there (`tokio_compat::yield_point`); its address tells
/// [`on_compat_thread`]. Never written.
#[cfg(all(feature = "tokio-compat", not(loom)))]
static COMPAT_THREAD: AtomicUsize = AtomicUsize::new(0);

#[cfg(not(loom))]
use std::sync::atomic::{AtomicUsize, Ordering};

crate::sync::scheduler_thread_local! {
    static HANDLE: RefCell<Option<Handle>> = RefCell::new(None);
    static IN_BLOCK_ON: Cell<bool> = Cell::new(false);
    static POLL_RECORD: Scoped<PollRecord> = Scoped::unset();
}

#[cfg(not(loom))]
std::thread_local! {
    static IDLE_WORD: Scoped<AtomicUsize> = const { Scoped::with_default(&NOT_A_WORKER) };
}

crate::sync::cfg_loom! {
    crate::sync::scheduler_thread_local! {
        static SLOW_PATH_FORCED: Cell<bool> = Cell::new(false);
        // Under loom, `IDLE_WORD` without its static default (loom's atomics
        // cannot live in a `static`): unset off a worker.
        static LOOM_IDLE_WORD: Scoped<crate::sync::AtomicUsize> = Scoped::unset();
    }

    /// `true` if `yield_if_busy()` can return at once: this thread is not a
    /// worker, or one of its runtime's workers is idle and nothing needs the
    /// running task's attention (see `idle::fast_path_may_continue`).
    pub(crate) fn may_skip_yield() -> bool {
        !SLOW_PATH_FORCED.with(Cell::get)
            && LOOM_IDLE_WORD.with(|word| {
                word.with(|word| {
                    word.is_none_or(|word| {
                        // An `Acquire` read-modify-write, where the real fast path
                        // loads (`Relaxed`): loom lets a load in a loop read a stale
                        // value for ever, which no processor does, so an endless
                        // `yield_if_busy()` loop would never see shutdown's
                        // attention hold, nor then the flag set before it. Reading
                        // the latest value, and what was published with it, models
                        // the eventual visibility the real loop relies on.
                        let state = word.fetch_add(0, crate::sync::Ordering::Acquire);
                        idle::fast_path_may_continue(state)
                    })
                })
            })
    }
}

/// `true` if `yield_if_busy()` can return at once: this thread is not a
/// worker, or one of its runtime's workers is idle and nothing needs the
/// running task's attention (see `idle::fast_path_may_continue`).
#[cfg(not(loom))]
#[inline(always)]
pub(crate) fn may_skip_yield() -> bool {
    IDLE_WORD.with(|word| {
        // SAFETY: as in `Scoped::with`: the pointer is never null (its
        // default is `NOT_A_WORKER`) and points at a static or at the idle
        // word of the runtime whose worker loop encloses this call. Relaxed:
        // the value is a hint (see `yield_if_busy`'s docs); a stale read
        // costs at most one needless slow path or one missed yield, and the
        // shutdown and abort bits become visible at a later call.
        let state = unsafe { (*word.as_ptr()).load(Ordering::Relaxed) };
        idle::fast_path_may_continue(state)
    })
}

/// Tells the long-poll detector that the running task reached a yield
/// point, so the stretch it measures restarts (`yield_if_busy()` calls this
/// when it lets the task continue). One TLS read and, on a worker, two
/// plain memory operations on that worker's own poll record.
#[inline(always)]
pub(crate) fn note_yield_point() {
    POLL_RECORD.with(|record| record.with(|record| record.map(PollRecord::yield_point)));
}

/// [`note_yield_point`] on `yield_if_busy()`'s fast path, which also counts
/// the call for the amortised idle check: a few more plain memory
/// operations on the same record. Returns `true` when the check's clock
/// back-off says to read the clock (`Core::recheck_idle`).
#[inline(always)]
pub(crate) fn note_fast_path_point() -> bool {
    POLL_RECORD.with(|record| record.with(|record| record.is_some_and(PollRecord::fast_path_point)))
}

/// Runs `f` with `yield_if_busy()`'s fast path switched off on this thread
/// (around polls of elastic tasks).
#[cfg(not(loom))]
pub(crate) fn with_slow_path_forced<R>(f: impl FnOnce() -> R) -> R {
    IDLE_WORD.with(|word| word.set(&FORCE_SLOW_PATH, f))
}

/// Runs `f` with `yield_if_busy()`'s fast path switched off on this thread
/// (around polls of elastic tasks).
#[cfg(loom)]
pub(crate) fn with_slow_path_forced<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SLOW_PATH_FORCED.with(|forced| forced.set(self.0));
        }
    }
    let _restore = Restore(SLOW_PATH_FORCED.with(|forced| forced.replace(true)));
    f()
}

/// A clone of the current runtime's handle, if this thread is in one.
pub(crate) fn try_current() -> Option<Handle> {
    HANDLE
        .try_with(|handle| handle.borrow().clone())
        .ok()
        .flatten()
}

crate::sync::cfg_not_loom! {
    /// The current runtime's driver, if this thread is in a runtime: the one
    /// way resources (I/O sources, timers, signal streams) reach the driver.
    pub(crate) fn current_driver() -> Option<Arc<Driver>> {
        HANDLE.with(|handle| {
            let handle = handle.borrow();
            handle.as_ref().map(|handle| handle.shared.driver.clone())
        })
    }

    /// The current runtime's clock time (`driver/clock.rs`), if this thread
    /// is in a runtime; no reference count is touched.
    pub(crate) fn clock_now() -> Option<std::time::Instant> {
        HANDLE.with(|handle| {
            let handle = handle.borrow();
            handle
                .as_ref()
                .map(|handle| handle.shared.driver.clock().now())
        })
    }
}

/// Runs `f` with the current runtime's handle, or panics with `misuse`.
#[track_caller]
pub(crate) fn with_current<R>(what: &str, f: impl FnOnce(&Handle) -> R) -> R {
    HANDLE.with(|handle| match &*handle.borrow() {
        Some(handle) => f(handle),
        None => outside_runtime(what),
    })
}

/// Panics: `what` was called outside of a brigade runtime.
#[track_caller]
pub(crate) fn outside_runtime(what: &str) -> ! {
    panic!(
        "{what} called outside of a brigade runtime: call it from a task, from inside \
         `Runtime::block_on`, or from a `spawn_blocking` closure; or keep a \
         `brigade::Handle` and call the method of the same name on it"
    )
}

/// Makes `handle` current (and sets `IN_BLOCK_ON`) while `f` runs: a
/// scoped entry on the thread's stack of entered runtimes (below).
fn with_handle<R>(handle: Handle, in_block_on: bool, f: impl FnOnce() -> R) -> R {
    struct Restore {
        mark: Option<Mark>,
        in_block_on: bool,
    }
    impl Drop for Restore {
        fn drop(&mut self) {
            IN_BLOCK_ON.with(|flag| flag.set(self.in_block_on));
            if let Some(mark) = self.mark.take() {
                leave_scope(mark);
            }
        }
    }
    let shared = handle.shared.clone();
    let _restore = Restore {
        mark: Some(enter_scope(handle)),
        in_block_on: IN_BLOCK_ON.with(|flag| flag.replace(in_block_on)),
    };
    shared.enter_tokio_compat(f)
}

/// Makes this thread a tokio-compat thread of `handle`'s runtime until
/// [`leave_compat_thread`] (tokio's `on_thread_start` hook; see the module
/// docs for why it is not scoped).
#[cfg(all(feature = "tokio-compat", not(loom)))]
pub(crate) fn enter_compat_thread(handle: Handle) {
    let previous = HANDLE.with(|current| current.borrow_mut().replace(handle));
    drop(previous);
    IDLE_WORD.with(|word| word.set_for_thread(&COMPAT_THREAD));
    current::set_compat_thread(true);
}

/// Undoes [`enter_compat_thread`] (tokio's `on_thread_stop` hook): the
/// thread's handle is dropped here, so the runtime's state can go once its
/// last thread has stopped.
#[cfg(all(feature = "tokio-compat", not(loom)))]
pub(crate) fn leave_compat_thread() {
    IDLE_WORD.with(|word| word.set_for_thread(&NOT_A_WORKER));
    current::set_compat_thread(false);
    let handle = HANDLE.with(|current| current.borrow_mut().take());
    drop(handle);
}

#[cfg(all(feature = "tokio-compat", not(loom)))]
pub(crate) use crate::task::current::on_compat_thread;

/// Runs `f` with `handle`'s runtime current, as on one of its blocking-pool
/// threads (a thread hook: `thread_hooks.rs`).
pub(crate) fn run_in_context<R>(handle: Handle, f: impl FnOnce() -> R) -> R {
    with_handle(handle, false, f)
}

/// Runs the worker loop `f` with this thread made the worker running
/// `worker`, of `handle`'s runtime, whose idle state word is `idle_word`
/// and whose poll record is `record`.
pub(crate) fn run_worker<R>(
    worker: &(dyn Worker + 'static),
    handle: Handle,
    idle_word: &crate::sync::AtomicUsize,
    record: &PollRecord,
    f: impl FnOnce() -> R,
) -> R {
    #[cfg(not(loom))]
    let run = || current::set_worker(worker, || IDLE_WORD.with(|word| word.set(idle_word, f)));
    #[cfg(loom)]
    let run = || {
        current::set_worker(worker, || {
            LOOM_IDLE_WORD.with(|word| word.set(idle_word, f))
        })
    };
    // Yield points bump the poll record for the long-poll detector and for
    // compensation, which both need to tell stretches apart.
    // It also counts fast-path calls for the amortised idle check, so it is
    // set on every worker.
    let with_record = || POLL_RECORD.with(|current| current.set(record, run));
    with_handle(handle, false, with_record)
}

/// Runs `f` on a blocking-pool thread of `handle`'s runtime.
pub(crate) fn run_blocking<R>(handle: Handle, f: impl FnOnce() -> R) -> R {
    with_handle(handle, false, f)
}

/// Runs `f` (the body of `block_on`) with `handle` current.
///
/// # Panics
/// If the thread is a worker or already inside `block_on`: blocking there
/// would stall the worker (or deadlock a runtime waiting on itself).
#[track_caller]
pub(crate) fn run_block_on<R>(handle: Handle, f: impl FnOnce() -> R) -> R {
    let on_worker = on_worker();
    if on_worker || IN_BLOCK_ON.with(Cell::get) {
        panic!(
            "cannot call `block_on` from inside a brigade runtime: this thread is already \
             driving async code (a worker thread or another `block_on`), and blocking it \
             would stall or deadlock the runtime. `.await` the future instead, or use \
             `brigade::spawn_blocking` to run blocking code"
        );
    }
    with_handle(handle, true, f)
}

// The thread's stack of entered runtimes.
//
// ## The stack
// Each thread keeps the runtimes it has entered, innermost last, and
// `context::HANDLE` (what `spawn` and `Handle::current` read) mirrors the
// innermost one. Two kinds of entry push onto it:
// - **Scoped** ones (`context::with_handle`: a worker's loop, `block_on`,
//   a blocking-pool thread, a thread hook), which run a closure and, when
//   it returns or unwinds, remove their entry and every entry above it:
//   entries pushed inside the closure and still there (guards leaked or
//   moved out of it) go with it.
// - **Guards** ([`EnterGuard`]), which push an entry with a fresh id and
//   remove exactly that entry when dropped, wherever it is in the stack.
//
// So the current runtime is always that of the innermost entry still in
// force, whatever order guards are dropped in: nothing can leave a runtime
// current after its entry is gone. tokio's contract is kept on top: a
// guard dropped while it is not the innermost entry, or after the scope it
// was made in has ended, panics (unless the thread is already panicking),
// after the stack has been put right.
//

/// One entered runtime.
struct Entry {
    /// Unique on this thread; what a guard finds its entry by.
    id: u64,
    handle: Handle,
}

crate::sync::scheduler_thread_local! {
    static ENTERED: RefCell<Vec<Entry>> = RefCell::new(Vec::new());
    static NEXT_ENTRY_ID: Cell<u64> = Cell::new(0);
}

/// A scoped entry's id: [`leave_scope`] cuts the stack back to below it.
struct Mark(u64);

/// Pushes a scoped entry for `handle`; undo it with [`leave_scope`].
fn enter_scope(handle: Handle) -> Mark {
    Mark(push(handle))
}

/// Removes the scoped entry `mark` and every entry pushed after it (and
/// still there). Found by id, not by position: a guard taken before the
/// scope and dropped inside it removed an entry below this one.
fn leave_scope(mark: Mark) {
    let removed: Vec<Entry> = ENTERED.with(|entered| {
        let mut entered = entered.borrow_mut();
        match entered.iter().rposition(|entry| entry.id == mark.0) {
            Some(index) => entered.drain(index..).collect(),
            None => Vec::new(),
        }
    });
    mirror_innermost();
    // Dropped with no borrow held: dropping a handle can drop a runtime's
    // shared state, and with it tasks whose destructors may enter again.
    drop(removed);
}

/// Pushes an entry for `handle` and makes it current; returns its id.
pub(crate) fn push(handle: Handle) -> u64 {
    let id = NEXT_ENTRY_ID.with(|next| next.replace(next.get() + 1));
    ENTERED.with(|entered| entered.borrow_mut().push(Entry { id, handle }));
    mirror_innermost();
    id
}

/// What dropping a guard found.
pub(crate) enum Removed {
    /// Its entry was the innermost one.
    InOrder,
    /// Its entry was below others, or already gone with its scope.
    OutOfOrder,
}

/// Removes the entry `id`, wherever it is.
pub(crate) fn remove(id: u64) -> Removed {
    let (removed, in_order) = ENTERED.with(|entered| {
        let mut entered = entered.borrow_mut();
        match entered.iter().rposition(|entry| entry.id == id) {
            Some(index) => {
                let in_order = index + 1 == entered.len();
                (Some(entered.remove(index)), in_order)
            }
            None => (None, false),
        }
    });
    mirror_innermost();
    drop(removed);
    if in_order {
        Removed::InOrder
    } else {
        Removed::OutOfOrder
    }
}

/// Makes the innermost entry's runtime the current one (or none).
fn mirror_innermost() {
    let innermost =
        ENTERED.with(|entered| entered.borrow().last().map(|entry| entry.handle.clone()));
    let replaced = HANDLE.with(|current| std::mem::replace(&mut *current.borrow_mut(), innermost));
    // Dropped with no borrow held (see `leave_scope`).
    drop(replaced);
}

/// Whether this thread's context can still be read (it cannot while the
/// thread's locals are being destroyed).
pub(crate) fn context_alive() -> bool {
    ENTERED.try_with(|_| ()).is_ok()
}
