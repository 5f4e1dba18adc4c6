//! # Shutdown
//!
//! Dropping a [`Runtime`](crate::runtime::Runtime) (or calling `shutdown_timeout`)
//! runs [`shut_down`], on the dropping thread, in these steps:
//!
//! 1. **Flag.** [`ShutdownFlag::begin`](crate::runtime::scheduler::shutdown_flag::ShutdownFlag::begin) sets the shutdown flag (`SeqCst`).
//!    From here on the schedule hook, once it sees the flag, queues no
//!    woken task: it hands it to [`ShutdownFlag::cancel_later`](crate::runtime::scheduler::shutdown_flag::ShutdownFlag::cancel_later). (A push
//!    that raced with the store is caught by the push-then-check protocol,
//!    step 5.)
//! 2. **Attention.** The idle state word takes an attention hold for good
//!    (`attention.rs`), so `yield_if_busy()`'s fast path stops returning at once;
//!    its slow path sees the flag and gives way. A task looping on
//!    `yield_if_busy()`, `yield_now()` or in an elastic task therefore
//!    returns `Pending` at its next yield point.
//! 3. **Wake everyone.** Every sleeping worker is unparked
//!    (`Idle::notify_all`), and so is every primary's parker (a worker the
//!    CPU limit parked is no sleeper: `worker/park_by_limit.rs`), resting spare threads are told to exit and no
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
//!    set-aside list (`shutdown_flag::drain_queues`). A push that races with this (a
//!    foreign thread's wake, a yield or an elastic task queued for
//!    admission) follows the push-then-check protocol on
//!    `ShutdownFlag` (`shutdown_flag.rs`), so no task stays in a queue nobody will drain.
//! 6. **Everything else.** The registry is closed (a spawn from now on
//!    cancels its task at once) and every task still alive is woken: tasks
//!    pending on I/O, timers, channels or nothing at all are set aside too.
//! 7. **Drop.** [`ShutdownFlag::drop_cancelled`](crate::runtime::scheduler::shutdown_flag::ShutdownFlag::drop_cancelled) drops the set-aside
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
//!     unrun, except mandatory ones (`fs` writes, `blocking.rs`), which
//!     the pool's threads run; running ones, and those, are waited for
//!     (until the deadline).
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

use crate::runtime::Shared;
use crate::runtime::scheduler::shutdown_flag::drain_queues;
use crate::sync::thread;
use crate::sync::{Condvar, Mutex, lock, wait_until};

/// The runtime's threads, as [`shut_down`] needs them.
pub(crate) struct WorkerThreads {
    pub(crate) threads: Vec<thread::JoinHandle<()>>,
    /// How many worker threads are still running, and the condvar their
    /// [`ExitSignal`]s notify.
    pub(crate) running: Arc<(Mutex<usize>, Condvar)>,
    /// The fallback driver thread, if enabled.
    pub(crate) fallback: Option<std::thread::JoinHandle<()>>,
    /// The monitor thread (elastic controller, admission, long polls).
    pub(crate) monitor: Option<std::thread::JoinHandle<()>>,
}

/// Runs the shutdown sequence of the module docs. Waits until `deadline`,
/// if given, for worker threads and blocking closures.
pub(crate) fn shut_down(shared: &Shared, mut threads: WorkerThreads, deadline: Option<Instant>) {
    tracing::debug!(target: "brigade::runtime::shutdown", "runtime shutting down");
    shared.shutdown.begin(); // 1
    shared.idle.attention().hold(); // 2: never given back
    shared.idle.notify_all(); // 3
    // 3, for workers parked by the CPU limit, which are no sleepers
    // (`worker/park_by_limit.rs`).
    for worker in 0..shared.num_workers() {
        shared.idle.unpark(worker);
    }
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
            target: "brigade::runtime::shutdown",
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
        tracing::warn!(target: "brigade::runtime::shutdown", "runtime shutdown timed out waiting for the fallback driver thread");
    }
    if !shared.blocking.shutdown(deadline) {
        // 10
        tracing::warn!(target: "brigade::runtime::shutdown", "runtime shutdown timed out waiting for spawn_blocking closures");
    }
    #[cfg(feature = "tokio-compat")]
    if let Some(compat) = shared.tokio_compat.get() {
        compat.shut_down(); // 11
    }
    tracing::debug!(target: "brigade::runtime::shutdown", "runtime shut down");
}

/// Step 4 for spare worker threads (`compensation/spare_slots.rs`): waits until they have
/// exited, except the calling thread if it is one of them.
fn wait_spares_stopped(shared: &Shared, deadline: Option<Instant>) -> bool {
    let own = crate::runtime::scheduler::worker::with_current(|core| {
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
pub(crate) struct ExitSignal(pub(crate) Arc<(Mutex<usize>, Condvar)>);

impl Drop for ExitSignal {
    fn drop(&mut self) {
        *lock(&self.0.0) -= 1;
        self.0.1.notify_all();
    }
}
