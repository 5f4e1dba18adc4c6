//! The blocking pool: threads for `spawn_blocking`, so blocking calls never
//! occupy a worker.
//!
//! ## Protocol
//! All state is under one mutex (the pool is not on the async hot path).
//! - `push`: queue the task; if a thread is idle, claim it (`idle -= 1`,
//!   `wakeups += 1`) and signal; else, below `max_threads`, start a thread.
//! - A thread that cannot start (`spawn_failed`) leaves its task queued for
//!   the pool's other threads; with none left, the queued tasks are
//!   cancelled, never left waiting for a thread that nobody will start.
//! - A thread runs queued tasks until the queue is empty, then waits as idle.
//!   It leaves the wait when it finds a wake-up to consume (the pusher already
//!   took it off `idle`), at shutdown, or after `keep_alive` without work
//!   (then it exits). Counting claimed wake-ups separately from signals makes
//!   spurious condvar wake-ups and timeouts that race with a push harmless.
//! - A task is *mandatory* ([`Mandatory::Yes`]) when dropping it unrun
//!   would lose data: a file write (`fs`), whose caller was told the bytes
//!   were taken. As tokio's pool, shutdown runs those rather than drop them.
//! - Shutdown sets the flag, drops every queued task that is not mandatory
//!   (cancelling it) and leaves the mandatory ones queued, wakes every idle
//!   thread, then waits (up to a deadline) for `threads` and `stopping` to
//!   reach zero. A thread still runs queued tasks after the flag is set and
//!   leaves only once the queue is empty, so the mandatory tasks run, in
//!   their order, before the pool's threads are gone (past a deadline, in
//!   the background). A queued task implies a counted thread (the pusher
//!   starts one, or one that failed to start cancels the orphans), so
//!   somebody is there to run them. A push after the flag is refused, as
//!   tokio's is, mandatory or not: its `JoinHandle` resolves as cancelled.
//!   A thread leaving the pool moves itself from `threads` to `stopping`
//!   under the lock, and leaves `stopping` once its stop hook
//!   (`thread_hooks.rs`) has run.
//! - Each queued task holds the runtime's clock (`driver/clock.rs`) from
//!   its push until its closure returned, and so its `JoinHandle`'s waker
//!   was woken, or until it is dropped unrun: a paused clock does not
//!   auto-advance meanwhile (`runtime/scheduler/auto_advance.rs`). A shutdown that runs
//!   on one of the pool's own threads (a runtime dropped inside a
//!   `spawn_blocking` closure) waits for the others only: that thread exits
//!   once its closure returns.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::driver::Driver;
use crate::runtime::handle::Handle;
use crate::runtime::threads::thread_names::ThreadNames;
use crate::runtime::{Shared, context};
use crate::sync::{Condvar, Mutex, lock, wait_timeout, wait_until};
use crate::task::Runnable;

thread_local! {
    /// The pool this thread belongs to, if it is a blocking-pool thread
    /// (compared by address only, never dereferenced).
    static POOL_OF_THIS_THREAD: Cell<*const BlockingPool> = const { Cell::new(std::ptr::null()) };
}

pub(crate) struct BlockingPool {
    state: Mutex<PoolState>,
    /// Signals idle threads (work or shutdown).
    work: Condvar,
    /// Signals shutdown that a thread exited.
    exited: Condvar,
    max_threads: usize,
    keep_alive: Duration,
    thread_names: Arc<ThreadNames>,
    stack_size: Option<usize>,
    /// For the clock's holds.
    driver: Arc<Driver>,
}

/// Whether a queued blocking task runs even if the runtime shuts down
/// before a thread took it (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mandatory {
    /// Run at shutdown too: dropping it would lose data (a file write).
    Yes,
    /// Dropped unrun at shutdown (cancelled): every `spawn_blocking`.
    No,
}

/// A task waiting for a thread.
struct Queued {
    runnable: Runnable,
    mandatory: Mandatory,
}

#[derive(Default)]
struct PoolState {
    queue: VecDeque<Queued>,
    threads: usize,
    /// Threads that left the pool and run their stop hook.
    stopping: usize,
    idle: usize,
    wakeups: usize,
    shutdown: bool,
    /// The last thread start failed (a warning was logged for the spell).
    spawn_failing: bool,
}

impl BlockingPool {
    pub(crate) fn new(
        max_threads: usize,
        keep_alive: Duration,
        thread_names: Arc<ThreadNames>,
        stack_size: Option<usize>,
        driver: Arc<Driver>,
    ) -> Self {
        BlockingPool {
            state: Mutex::new(PoolState::default()),
            work: Condvar::new(),
            exited: Condvar::new(),
            max_threads,
            keep_alive,
            thread_names,
            stack_size,
            driver,
        }
    }

    /// Queues a blocking task (the schedule hook of `spawn_blocking` tasks).
    pub(crate) fn push(&self, shared: &Arc<Shared>, runnable: Runnable, mandatory: Mandatory) {
        let mut state = lock(&self.state);
        if state.shutdown {
            drop(state);
            drop(runnable);
            return;
        }
        self.driver.clock().acquire_hold();
        state.queue.push_back(Queued {
            runnable,
            mandatory,
        });
        if state.idle > 0 {
            state.idle -= 1;
            state.wakeups += 1;
            drop(state);
            self.work.notify_one();
        } else if state.threads < self.max_threads {
            state.threads += 1;
            drop(state);
            self.start_thread(shared);
        }
    }

    fn start_thread(&self, shared: &Arc<Shared>) {
        let handle = Handle {
            shared: shared.clone(),
        };
        let (name, number) = self.thread_names.blocking();
        let mut builder = std::thread::Builder::new().name(name);
        if let Some(size) = self.stack_size {
            builder = builder.stack_size(size);
        }
        // The number is held until the thread exits, then free for the next.
        let body = move || {
            let _number = number;
            handle.shared.blocking.thread_main(handle.clone());
        };
        match builder.spawn(body) {
            Ok(_) => lock(&self.state).spawn_failing = false,
            Err(error) => self.spawn_failed(&error),
        }
    }

    /// A thread could not start (`RLIMIT_NPROC`, `pthread_create`'s
    /// `EAGAIN`). While another pool thread lives, the queued tasks wait for
    /// it: a counted thread pops from the queue before it exits (both under
    /// the lock), so it will run them. With no thread left nobody would, so
    /// they are cancelled: their `JoinHandle`s return a cancelled
    /// `JoinError`, and the closures are dropped unrun. A warning is logged
    /// once per spell of failures.
    fn spawn_failed(&self, error: &std::io::Error) {
        let (orphans, first_of_spell) = {
            let mut state = lock(&self.state);
            state.threads -= 1;
            let first_of_spell = !std::mem::replace(&mut state.spawn_failing, true);
            let orphans = if state.threads == 0 {
                std::mem::take(&mut state.queue)
            } else {
                VecDeque::new()
            };
            (orphans, first_of_spell)
        };
        if first_of_spell {
            tracing::warn!(
                target: "brigade::runtime::blocking",
                %error,
                cancelled = orphans.len(),
                "could not start a blocking-pool thread: queued `spawn_blocking` closures wait \
                 for a running pool thread, or are cancelled if there is none"
            );
        } else {
            tracing::debug!(target: "brigade::runtime::blocking", %error, cancelled = orphans.len(), "could not start a blocking-pool thread");
        }
        // Cancelled outside the lock: a task's destructor may spawn again.
        drop(orphans);
    }

    fn thread_main(&self, handle: Handle) {
        POOL_OF_THIS_THREAD.with(|pool| pool.set(self));
        let shared = handle.shared.clone();
        context::run_blocking(handle, || {
            crate::runtime::threads::thread_hooks::run_thread(&shared, || self.serve());
        });
        // The stop hook has run: shutdown may stop waiting for this thread.
        lock(&self.state).stopping -= 1;
        self.exited.notify_all();
    }

    /// A blocking-pool thread's loop: runs queued closures until shutdown,
    /// or until it has been idle for `keep_alive`.
    fn serve(&self) {
        let mut state = lock(&self.state);
        loop {
            if let Some(Queued { runnable, .. }) = state.queue.pop_front() {
                drop(state);
                // A cancelled task is dropped unrun. `run` cannot unwind: the
                // harness catches panics from the closure and its destructor.
                if !runnable.metadata().is_cancelled() {
                    runnable.run();
                } else {
                    drop(runnable);
                }
                self.driver.release_hold();
                state = lock(&self.state);
                continue;
            }
            if state.shutdown {
                break;
            }
            state.idle += 1;
            let idle_since = Instant::now();
            loop {
                let remaining = self.keep_alive.saturating_sub(idle_since.elapsed());
                let (guard, timed_out) = wait_timeout(&self.work, state, remaining);
                state = guard;
                if state.wakeups > 0 {
                    state.wakeups -= 1;
                    break;
                }
                if state.shutdown || timed_out {
                    state.idle -= 1;
                    break;
                }
            }
            if !state.shutdown && state.queue.is_empty() && idle_since.elapsed() >= self.keep_alive
            {
                break;
            }
        }
        // Out of the pool (a push starts another thread), but shutdown
        // still waits for this one's stop hook (`thread_main`).
        state.threads -= 1;
        state.stopping += 1;
    }

    /// Cancels the queued tasks that are not mandatory, and waits for the
    /// threads to run the mandatory ones and exit, until `deadline` if one
    /// is given.
    pub(crate) fn shutdown(&self, deadline: Option<Instant>) -> bool {
        let cancelled: VecDeque<Queued> = {
            let mut state = lock(&self.state);
            state.shutdown = true;
            let (kept, cancelled) = std::mem::take(&mut state.queue)
                .into_iter()
                .partition(|queued| queued.mandatory == Mandatory::Yes);
            state.queue = kept;
            cancelled
        };
        self.work.notify_all();
        let dropped = cancelled.len();
        // Outside the lock: a task's destructor may spawn again.
        drop(cancelled);
        (0..dropped).for_each(|_| self.driver.release_hold());
        // A pool cannot wait for the thread that is shutting it down.
        let own = usize::from(POOL_OF_THIS_THREAD.with(|pool| std::ptr::eq(pool.get(), self)));
        let state = lock(&self.state);
        let (_state, timed_out) = wait_until(&self.exited, state, deadline, |state| {
            state.threads + state.stopping <= own
        });
        !timed_out
    }

    /// Threads currently in the pool.
    pub(crate) fn num_threads(&self) -> usize {
        lock(&self.state).threads
    }

    /// Threads waiting for work.
    pub(crate) fn num_idle_threads(&self) -> usize {
        lock(&self.state).idle
    }

    /// Tasks waiting for a thread.
    pub(crate) fn queue_depth(&self) -> usize {
        lock(&self.state).queue.len()
    }
}
