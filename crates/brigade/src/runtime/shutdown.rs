//! # Shutdown
//!
//! Dropping a [`Runtime`](super::Runtime) (or calling `shutdown_timeout`)
//! runs [`shut_down`], on the dropping thread, in these steps:
//!
//! 1. **Flag.** [`ShutdownState::begin`] sets the shutdown flag (`SeqCst`).
//!    From here on the schedule hook, once it sees the flag, queues no
//!    woken task: it hands it to [`ShutdownState::cancel_later`]. (A push
//!    that raced with the store is caught by the push-then-check protocol,
//!    step 5.)
//! 2. **Attention.** The idle state word takes an attention hold for good
//!    (`attention.rs`), so `yield_if_busy()`'s fast path stops returning at once;
//!    its slow path sees the flag and gives way. A task looping on
//!    `yield_if_busy()`, `yield_now()` or in an elastic task therefore
//!    returns `Pending` at its next yield point.
//! 3. **Wake everyone.** Every sleeping worker is unparked
//!    (`Idle::notify_all`), resting spare threads are told to exit and no
//!    new spare starts (`Compensation::close`), and the monitor thread is
//!    signalled under the lock it waits with, so it cannot miss the flag.
//! 4. **Workers stop.** Each worker, spares included, checks the flag between two polls and
//!    leaves its loop; it then leaves the thread's runtime context and
//!    drops the tasks left in its own deque (their futures are dropped on
//!    that worker). The dropping thread waits for all of them, until the
//!    deadline if one was given, except itself when it is one of them (a
//!    runtime dropped inside one of its own tasks). A current-thread
//!    runtime's worker has no thread: the dropping thread drops the tasks
//!    in its deque itself, or, if a `block_on` runs the worker, that
//!    thread does when it sees the flag (`current_thread.rs`). A worker whose task never reaches a yield
//!    point (a blocking call, an endless loop with no `.await`) cannot be
//!    stopped: without a deadline the wait lasts as long as that poll.
//! 5. **Shared queues.** The injector, the yield queue (whose deferred
//!    wake-ups are woken) and the admission queue are emptied into the
//!    set-aside list ([`drain_queues`]). A push that races with this (a
//!    foreign thread's wake, a yield or an elastic task queued for
//!    admission) follows the push-then-check protocol on
//!    [`ShutdownState`], so no task stays in a queue nobody will drain.
//! 6. **Everything else.** The registry is closed (a spawn from now on
//!    cancels its task at once) and every task still alive is woken: tasks
//!    pending on I/O, timers, channels or nothing at all are set aside too.
//! 7. **Drop.** [`ShutdownState::drop_cancelled`] drops the set-aside
//!    tasks' futures, holding no lock (a destructor may wake other tasks,
//!    which are set aside and dropped in the next round), until none is
//!    left. Then the list closes: a task woken later, by a waker that
//!    outlived the runtime, is dropped by the thread that wakes it.
//!    Every future is dropped exactly once: by a worker (step 4), here, or
//!    by that late waker; a dropped future's `JoinHandle` resolves as
//!    cancelled.
//! 8. **Monitor.** The monitor thread has seen the flag; it is joined.
//! 9. **Driver.** The I/O driver shuts down: every registered source fails
//!    its waits with an error, and the fallback driver thread, if any, is
//!    woken and joined (until the deadline, waking it again every 10 ms in
//!    case a straggling worker used up the wake-up).
//! 10. **Blocking pool.** Queued `spawn_blocking` closures are dropped
//!     unrun; running ones are waited for (until the deadline).
//! 11. **tokio.** With feature `tokio-compat`, the runtime's tokio runtime
//!     is shut down in the background (`tokio_compat.rs`): last, since
//!     brigade tasks dropped in the steps before may hold tokio resources.
//!     Its threads then exit on their own, each dropping the runtime handle
//!     its context held, so tokio tasks dropped there may still use
//!     brigade's API (a spawn onto a runtime shut down is cancelled).
//!
//! After step 10 no runtime thread runs brigade code, except workers or
//! blocking closures abandoned at a deadline, and the dropping thread itself
//! when it is one of the runtime's (a worker or a `spawn_blocking` thread):
//! those finish their current poll or closure and exit. `Handle`s, `JoinHandle`s and wakers may outlive
//! the runtime: a spawn through a `Handle` returns a handle that resolves as
//! cancelled, and a wake drops its task.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Shared;
use crate::sync::thread;
use crate::sync::{AtomicBool, Condvar, Mutex, Ordering, fence, lock, wait_until};
use crate::task::Runnable;

/// The shutdown flag and the tasks set aside to be dropped.
///
/// ## The push-then-check protocol
/// The flag is set once (`SeqCst`, step 1) before the shutting-down thread
/// drains the shared queues (step 5). Whoever pushes into a shared queue
/// (the injector, the yield queue, the admission queue) reads the flag
/// with [`is_set_after_push`](Self::is_set_after_push) *after* its push
/// and, if it is set, drains the queues itself. The push and the drain are
/// ordered by `SeqCst` fences or the queue's lock, so whichever of the two
/// comes second sees the other: no task is left in a queue that nobody will
/// drain (it would also keep the runtime's shared state alive through its
/// schedule closure).
pub(crate) struct ShutdownState {
    flag: AtomicBool,
    cancelled: Mutex<Cancelled>,
}

/// See [`ShutdownState::cancel_later`].
#[derive(Default)]
struct Cancelled {
    runnables: Vec<Runnable>,
    /// Set by the shutdown's final `drop_cancelled`: later tasks are
    /// dropped at once.
    closed: bool,
}

impl ShutdownState {
    pub(crate) fn new() -> Self {
        ShutdownState {
            flag: AtomicBool::new(false),
            cancelled: Mutex::new(Cancelled::default()),
        }
    }

    /// Whether shutdown has begun.
    #[cfg(not(loom))]
    pub(crate) fn is_set(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// Whether shutdown has begun: under loom a read-modify-write, which
    /// reads the latest value. The loops that poll the flag (the worker
    /// loop, `yield_if_busy()`'s slow path) rely on the flag becoming
    /// visible eventually, which every processor guarantees and loom does
    /// not model (it lets a load in a loop read a stale value for ever).
    /// Protocols that need more than that read the flag with
    /// [`is_set_after_push`](Self::is_set_after_push).
    #[cfg(loom)]
    pub(crate) fn is_set(&self) -> bool {
        self.flag.fetch_or(false, Ordering::Acquire)
    }

    /// Whether shutdown has begun, read after a push into a shared queue
    /// (see the protocol on the type).
    pub(crate) fn is_set_after_push(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    /// Step 1: sets the flag.
    fn begin(&self) {
        // A swap rather than a store: the same `SeqCst` write, which loom
        // 0.7 also orders before the read-modify-writes of `is_set` under
        // loom (after a plain `SeqCst` store its models let such a read
        // miss the flag, even one that synchronised with this thread).
        self.flag.swap(true, Ordering::SeqCst);
    }

    /// Cancels a task after shutdown began: it will be dropped, never run.
    ///
    /// Not dropped here, though: this runs inside `Waker::wake` (through
    /// `schedule`), whose caller may hold a lock that the task's destructor
    /// takes too. h2 does exactly that: dropping one of its stream handles
    /// locks the connection's stream state and wakes the connection task;
    /// dropping that task on the spot locks the same mutex again and
    /// deadlocks the shutdown. So the task waits here until step 7, which
    /// holds no lock while dropping. After that, tasks woken by threads
    /// outside the runtime are dropped at once, as there is nobody left to
    /// drop them.
    pub(crate) fn cancel_later(&self, runnable: Runnable) {
        let mut cancelled = lock(&self.cancelled);
        if cancelled.closed {
            drop(cancelled);
            drop(runnable);
        } else {
            cancelled.runnables.push(runnable);
        }
    }

    /// Step 7: drops the set-aside tasks, and any their destructors wake,
    /// until none is left; then closes the list.
    fn drop_cancelled(&self) {
        loop {
            let batch = {
                let mut cancelled = lock(&self.cancelled);
                if cancelled.runnables.is_empty() {
                    cancelled.closed = true;
                    return;
                }
                std::mem::take(&mut cancelled.runnables)
            };
            drop(batch);
        }
    }
}

/// Step 5: moves every task in the shared queues to the set-aside list.
/// Also called by a pusher that finds the flag set after its push.
pub(crate) fn drain_queues(shared: &Shared) {
    // Orders the flag's store (step 1) before the look at the queues, for
    // the shutting-down thread, as the pushers' fences do for them (see
    // `ShutdownState`), without relying on the queue's own fences.
    fence(Ordering::SeqCst);
    while let Some(runnable) = crate::sync::injector_pop(&shared.injector) {
        shared.shutdown.cancel_later(runnable);
    }
    // Deferred wake-ups: waking one schedules its task into a runtime that
    // is shutting down, which sets it aside. Background tasks are set
    // aside directly.
    shared
        .yield_queue
        .drain(|runnable| shared.shutdown.cancel_later(runnable));
    for runnable in shared.admission.take_waiting() {
        shared.shutdown.cancel_later(runnable);
    }
}

/// The runtime's threads, as [`shut_down`] needs them.
pub(super) struct WorkerThreads {
    pub(super) threads: Vec<thread::JoinHandle<()>>,
    /// How many worker threads are still running, and the condvar their
    /// [`ExitSignal`]s notify.
    pub(super) running: Arc<(Mutex<usize>, Condvar)>,
    /// The fallback driver thread, if enabled.
    pub(super) fallback: Option<std::thread::JoinHandle<()>>,
    /// The monitor thread (elastic controller, admission, long polls).
    pub(super) monitor: Option<std::thread::JoinHandle<()>>,
}

/// Runs the shutdown sequence of the module docs. Waits until `deadline`,
/// if given, for worker threads and blocking closures.
pub(super) fn shut_down(shared: &Shared, mut threads: WorkerThreads, deadline: Option<Instant>) {
    tracing::debug!("runtime shutting down");
    shared.shutdown.begin(); // 1
    shared.idle.attention().hold(); // 2: never given back
    shared.idle.notify_all(); // 3
    shared.compensation.close();
    shared.admission.wake_monitor();
    if let Some(slot) = &shared.current_thread {
        // 4, for a current-thread worker no `block_on` drives.
        slot.drop_idle_tasks();
    }
    let monitor = threads.monitor.take();
    let fallback = threads.fallback.take();
    if !threads.wait_stopped(deadline) || !wait_spares_stopped(shared, deadline) {
        // 4
        tracing::warn!(
            "runtime shutdown timed out waiting for worker threads (a task is blocking its worker)"
        );
    }
    drain_queues(shared); // 5
    shared.registry.close_and_wake_all(); // 6
    shared.shutdown.drop_cancelled(); // 7
    if let Some(monitor) = monitor {
        let _ = monitor.join(); // 8
    }
    shared.driver.shutdown(); // 9
    if let Some(fallback) = fallback
        && !join_fallback(shared, fallback, deadline)
    {
        tracing::warn!("runtime shutdown timed out waiting for the fallback driver thread");
    }
    if !shared.blocking.shutdown(deadline) {
        // 10
        tracing::warn!("runtime shutdown timed out waiting for spawn_blocking closures");
    }
    #[cfg(feature = "tokio-compat")]
    if let Some(compat) = shared.tokio_compat.get() {
        compat.shut_down(); // 11
    }
    tracing::debug!("runtime shut down");
}

/// Step 4 for spare worker threads (`compensation/spare.rs`): waits until they have
/// exited, except the calling thread if it is one of them.
fn wait_spares_stopped(shared: &Shared, deadline: Option<Instant>) -> bool {
    let own = super::context::with_current_worker(|core| {
        core.is_some_and(|core| {
            std::ptr::eq(&**core.shared(), shared) && shared.compensation.is_spare(core.index())
        })
    });
    shared.compensation.wait_exited(usize::from(own), deadline)
}

/// How often step 9 wakes the driver again while the fallback thread has
/// not exited.
const FALLBACK_REWAKE: Duration = Duration::from_millis(10);

/// Step 9: waits for the fallback driver thread, until `deadline` if given;
/// `false` if the deadline passed first (the thread is left to exit on its
/// own). The driver is woken again every [`FALLBACK_REWAKE`]: a worker still
/// running past a deadline may poll the driver and use up the wake-up that
/// `Driver::shutdown` meant for the fallback thread.
fn join_fallback(
    shared: &Shared,
    fallback: std::thread::JoinHandle<()>,
    deadline: Option<Instant>,
) -> bool {
    while !fallback.is_finished() {
        let now = Instant::now();
        if deadline.is_some_and(|deadline| now >= deadline) {
            return false;
        }
        let pause = deadline.map_or(FALLBACK_REWAKE, |deadline| {
            FALLBACK_REWAKE.min(deadline.saturating_duration_since(now))
        });
        std::thread::sleep(pause);
        shared.driver.wake();
    }
    let _ = fallback.join();
    true
}

impl WorkerThreads {
    /// Step 4: waits for the workers to exit; `false` if the deadline
    /// passed first.
    fn wait_stopped(self, deadline: Option<Instant>) -> bool {
        let current = thread::current().id();
        let (count, condvar) = &*self.running;
        let running = lock(count);
        // A runtime dropped on one of its own workers cannot wait for that one.
        let own = usize::from(
            self.threads
                .iter()
                .any(|thread| thread.thread().id() == current),
        );
        let (running, timed_out) =
            wait_until(condvar, running, deadline, |running| *running <= own);
        if timed_out {
            return false;
        }
        drop(running);
        for thread in self.threads {
            if thread.thread().id() != current {
                let _ = thread.join();
            }
        }
        true
    }
}

/// Decrements the running-worker count when a worker thread exits, however
/// it exits.
pub(super) struct ExitSignal(pub(super) Arc<(Mutex<usize>, Condvar)>);

impl Drop for ExitSignal {
    fn drop(&mut self) {
        *lock(&self.0.0) -= 1;
        self.0.1.notify_all();
    }
}
