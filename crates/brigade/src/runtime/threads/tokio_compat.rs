//! Feature `tokio-compat`: code written for tokio runs inside brigade tasks.
//!
//! tokio's resources (`tokio::net`, `tokio::time`, `tokio::spawn`,
//! `tokio::task::spawn_blocking`, and the crates built on them: hyper-util's
//! client, reqwest, tonic, sqlx, …) look for a tokio runtime in a
//! thread-local context and panic with "there is no reactor running" when
//! they find none. So each brigade runtime built with the feature (and
//! [`Builder::tokio_compat`](crate::Builder::tokio_compat) left on) owns a
//! small tokio runtime, and every thread that polls brigade tasks (workers,
//! spares, blocking-pool threads, `block_on`) has that runtime's context
//! entered for as long as it serves brigade (`context::with_handle`):
//! entering once per thread, not per poll, keeps brigade's poll path free
//! of it.
//!
//! ## Where things run
//! - **tokio I/O and timers** are driven by the tokio runtime's worker
//!   threads, one of which sleeps in tokio's driver. A brigade task waiting
//!   on a tokio socket or timer is woken from that thread: one cross-thread
//!   wake per event, where brigade's own `net` and `time` wake tasks from
//!   the worker that polls the driver.
//! - **`tokio::spawn`** runs the task on those tokio threads, not on
//!   brigade's workers: tokio's `JoinHandle`, `LocalSet` and task-local
//!   semantics are tokio's own, and libraries that spawn background
//!   connection tasks (as hyper-util's client does) keep them off brigade's
//!   workers. CPU-heavy work belongs in `brigade::spawn`, where
//!   `yield_if_busy` and elastic admission apply.
//! - **`tokio::task::spawn_blocking`**, **`tokio::fs`** and
//!   **`tokio::process`**' blocking parts run on the tokio runtime's
//!   blocking pool; child processes are reaped by its signal driver.
//!
//! ## The compat threads are brigade threads too
//! The tokio runtime has [`Builder::tokio_compat_threads`] worker threads
//! (one by default) plus its blocking pool, named `brigade-tok-N`
//! (`thread_names.rs`). Each of them, from tokio's
//! `on_thread_start` hook to its `on_thread_stop` hook, has the brigade
//! runtime's context (`context::enter_compat_thread`), so `brigade::spawn`,
//! `brigade::time` and brigade's sockets work inside a `tokio::spawn`ed
//! task. The hook holds only a `Weak` reference to the runtime's state,
//! which owns the tokio runtime; the thread's own strong one lives in its
//! thread-local context until the thread exits, which it does once
//! shutdown's last step has stopped the tokio runtime, so the cycle is
//! broken there.
//!
//! `yield_if_busy()` there cannot step aside into brigade's queues (the
//! task is tokio's), so it spends a unit of the task's tokio budget
//! ([`yield_point`]) and gives way to tokio's scheduler once the budget of
//! its poll is used up, as tokio's own resources do: the other tokio tasks
//! on those threads, and tokio's driver, get their turn.
//!
//! What brigade sees of these threads is what tokio's stable metrics say
//! (`TokioCompatMetrics`), and a `tracing` event (target
//! `brigade::tokio_compat`) says when a `tokio::spawn`ed task is first seen
//! there ([`FirstSpawn`]). tokio's per-task hooks are unstable, so no
//! stable API tells brigade when one of its tasks is polled: brigade's
//! long-poll detector, compensation, elastic admission and task classes do
//! not apply to tokio tasks.
//!
//! [`Builder::tokio_compat_threads`]: crate::Builder::tokio_compat_threads
//!
//! The tokio runtime starts when the brigade runtime is built and stops
//! with it: at shutdown, after brigade's own tasks are dropped, it is shut
//! down in the background (`shutdown_background`: tasks spawned on it are
//! dropped and its threads exit on their own, so a brigade runtime dropped
//! from async code does not block). Without the feature nothing of this is
//! compiled.
//!
//! ## Why not `async-compat`
//! smol's `async-compat` does the same for any executor by wrapping each
//! future and entering a process-wide tokio runtime around every poll. Here
//! the runtime owns the threads, so entering once per thread is cheaper than
//! once per poll (a thread-local swap and an `Arc` clone each time), needs
//! no wrapper around user futures, and lets the tokio runtime live and die
//! with the brigade runtime instead of the process. The part brigade needs
//! is this file.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use crate::runtime::handle::Handle;
use crate::runtime::identity::Id;
use crate::runtime::threads::thread_names::ThreadNames;
use crate::runtime::{Shared, context};
use crate::sync::{Mutex, lock};

/// The `tracing` target of the first-spawn event.
const TARGET: &str = "brigade::tokio_compat";

/// The tokio runtime of one brigade runtime; see the module docs.
pub(crate) struct TokioCompat {
    /// `None` once shut down.
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    handle: tokio::runtime::Handle,
}

impl TokioCompat {
    /// Starts the tokio runtime: `threads` worker threads (named by the
    /// brigade runtime's `thread_names`: `brigade-tok-N` by default), I/O,
    /// time and signal drivers enabled, every thread in the context of the
    /// brigade runtime whose state `brigade` points at. `stack_size` is the
    /// brigade runtime's (`Builder::thread_stack_size`).
    pub(crate) fn start(
        threads: usize,
        thread_names: Arc<ThreadNames>,
        stack_size: Option<usize>,
        runtime: Id,
        brigade: Weak<Shared>,
    ) -> std::io::Result<Self> {
        let first_spawn = Arc::new(FirstSpawn::new(threads, runtime));
        let on_unpark = first_spawn.clone();
        let mut tokio = tokio::runtime::Builder::new_multi_thread();
        tokio
            .worker_threads(threads)
            .thread_name_fn(move || thread_names.tokio_compat())
            .on_thread_start(move || {
                if let Some(shared) = brigade.upgrade() {
                    context::enter_compat_thread(Handle { shared });
                }
            })
            .on_thread_stop(context::leave_compat_thread)
            .on_thread_park(move || first_spawn.check())
            .on_thread_unpark(move || on_unpark.check())
            .enable_all();
        if let Some(size) = stack_size {
            tokio.thread_stack_size(size);
        }
        let runtime = tokio.build()?;
        Ok(TokioCompat {
            handle: runtime.handle().clone(),
            runtime: Mutex::new(Some(runtime)),
        })
    }

    /// Runs `f` with the tokio runtime's context entered on this thread.
    pub(crate) fn enter<R>(&self, f: impl FnOnce() -> R) -> R {
        let _entered = self.handle.enter();
        f()
    }

    /// tokio's own metrics of the runtime (`TokioCompatMetrics`).
    pub(crate) fn metrics(&self) -> tokio::runtime::RuntimeMetrics {
        self.handle.metrics()
    }

    /// Stops the tokio runtime without waiting for its threads (see the
    /// module docs). Idempotent.
    pub(crate) fn shut_down(&self) {
        let runtime = lock(&self.runtime).take();
        if let Some(runtime) = runtime {
            runtime.shutdown_background();
        }
    }
}

/// `yield_if_busy()` on a compat thread (`step_aside::slow_path`): spends
/// one unit of the running tokio task's cooperative budget, and gives way
/// (waking the task again, through tokio) once the budget is used up.
/// Outside a tokio task the budget is unconstrained, so it continues.
pub(crate) fn yield_point(cx: &mut Context<'_>) -> Poll<()> {
    match tokio::task::coop::poll_proceed(cx) {
        Poll::Ready(progress) => {
            progress.made_progress();
            Poll::Ready(())
        }
        Poll::Pending => Poll::Pending,
    }
}

/// Reports, once per runtime, that a `tokio::spawn`ed task runs on the
/// compat threads.
///
/// Protocol: tokio offers no stable spawn hook, so the compat threads look
/// at tokio's count of alive tasks (only `tokio::spawn` creates them: the
/// brigade tasks that use tokio sockets and timers are not tokio tasks)
/// each time one parks or wakes. A task spawned from outside those threads
/// wakes a parked one, which sees it at once; one spawned while they are
/// all awake is seen at the next park or wake while any tokio task is
/// alive. `reported` is only a once-flag for the event (`Relaxed`: two
/// threads that both see the first task swap it, and one of them wins).
struct FirstSpawn {
    reported: AtomicBool,
    threads: usize,
    /// The brigade runtime's id (`Handle::id`), to tell runtimes apart.
    runtime: Id,
}

impl FirstSpawn {
    fn new(threads: usize, runtime: Id) -> Self {
        FirstSpawn {
            reported: AtomicBool::new(false),
            threads,
            runtime,
        }
    }

    /// From tokio's park and unpark hooks, on a compat worker thread.
    fn check(&self) {
        if self.reported.load(Ordering::Relaxed) {
            return;
        }
        let Ok(tokio) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if tokio.metrics().num_alive_tasks() > 0 && !self.reported.swap(true, Ordering::Relaxed) {
            tracing::info!(
                target: TARGET,
                runtime = %self.runtime,
                threads = self.threads,
                "a `tokio::spawn`ed task runs on the tokio-compat threads, outside brigade's \
                 scheduler: brigade's long-poll detector, compensation and elastic admission \
                 do not see it (use `brigade::spawn` for work brigade should schedule)"
            );
        }
    }
}
