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
//! - **tokio I/O and timers** are driven by the tokio runtime's single
//!   worker thread, which sleeps in tokio's driver. A brigade task waiting
//!   on a tokio socket or timer is woken from that thread: one cross-thread
//!   wake per event, where brigade's own `net` and `time` wake tasks from
//!   the worker that polls the driver.
//! - **`tokio::spawn`** runs the task on that tokio thread, not on brigade's
//!   workers: tokio's `JoinHandle`, `LocalSet` and task-local semantics are
//!   tokio's own, and libraries that spawn background connection tasks (as
//!   hyper-util's client does) keep them off brigade's workers. CPU-heavy
//!   work belongs in `brigade::spawn`, where `yield_if_busy` and elastic
//!   admission apply.
//! - **`tokio::task::spawn_blocking`** runs on the tokio runtime's blocking
//!   pool.
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

use crate::sync::{Mutex, lock};

/// The tokio runtime of one brigade runtime; see the module docs.
pub(crate) struct TokioCompat {
    /// `None` once shut down.
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    handle: tokio::runtime::Handle,
}

impl TokioCompat {
    /// Starts the tokio runtime: one worker thread named
    /// `{thread_name}-tokio`, I/O and time drivers enabled.
    pub(crate) fn start(thread_name: &str) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name(format!("{thread_name}-tokio"))
            .enable_all()
            .build()?;
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

    /// Stops the tokio runtime without waiting for its threads (see the
    /// module docs). Idempotent.
    pub(crate) fn shut_down(&self) {
        let runtime = lock(&self.runtime).take();
        if let Some(runtime) = runtime {
            runtime.shutdown_background();
        }
    }
}
