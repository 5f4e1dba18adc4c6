//! The free functions that spawn on the current runtime: [`spawn`],
//! [`spawn_blocking`] and [`spawn_elastic`] (also `brigade::spawn`, ...,
//! and `brigade::runtime::spawn`, ...). They reach the runtime through
//! `runtime::context` and its `Handle`, as the rest of `task/` does.

use std::future::Future;
use std::panic::Location;

use super::{JoinHandle, TaskClass};
use crate::runtime::context;

/// Spawns a task on the current runtime and returns its [`JoinHandle`].
///
/// The task starts running on a worker at once, whether or not the handle
/// is awaited; dropping the handle detaches it. (On a current-thread
/// runtime it runs when the thread in `block_on` gets to it: once the
/// spawning future awaits; see [`Builder::new_current_thread`](crate::Builder::new_current_thread).)
///
/// # Panics
/// Outside a runtime context (a task, `Runtime::block_on`, or a
/// `spawn_blocking` closure). Use [`Handle::spawn`](crate::Handle::spawn) from other threads.
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// let total = rt.block_on(async {
///     let tasks: Vec<_> = (1..=10u64).map(|n| brigade::spawn(async move { n * n })).collect();
///     let mut total = 0;
///     for task in tasks {
///         total += task.await.unwrap();
///     }
///     total
/// });
/// assert_eq!(total, 385);
/// # Ok::<(), std::io::Error>(())
/// ```
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let location = Location::caller();
    context::with_current("brigade::spawn", |handle| {
        handle.spawn_at(future, location, TaskClass::Auto)
    })
}

/// Runs a blocking closure on the current runtime's blocking pool, so it
/// never occupies a worker, and returns its [`JoinHandle`].
///
/// # When no thread can start
/// If the pool needs a new thread and the OS refuses one (`RLIMIT_NPROC`,
/// or `pthread_create` failing with `EAGAIN`), the closure waits in the
/// pool's queue for one of its running threads to free up. If the pool has
/// no thread at all, nobody would run it: it is cancelled instead, dropped
/// unrun, and the handle returns a [`JoinError`](crate::JoinError)
/// whose `is_cancelled()` is true. Either way a warning is logged, once per
/// spell of failures.
///
/// # Panics
/// Outside a runtime context, like [`spawn`].
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// let contents = rt.block_on(async {
///     brigade::spawn_blocking(|| std::fs::read_to_string("Cargo.toml")).await
/// });
/// assert!(contents.unwrap().is_ok());
/// # Ok::<(), std::io::Error>(())
/// ```
#[track_caller]
pub fn spawn_blocking<F, R>(f: F) -> JoinHandle<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let location = Location::caller();
    context::with_current("brigade::spawn_blocking", |handle| {
        handle.spawn_blocking_at(f, location)
    })
}

/// Spawns an **elastic** task on the current runtime: background work whose
/// CPU use is throttled by the runtime's elastic admission controller.
///
/// An elastic task runs on grants of CPU time taken from a token bucket whose
/// refill rate follows the runtime's p99 scheduling latency (see
/// [`ElasticConfig`](crate::ElasticConfig)): while foreground tasks are
/// scheduled promptly the limit rises towards `max_utilization`; when the p99
/// exceeds the target it falls, and elastic tasks wait in an admission queue
/// (off the workers) for tokens. Inside an elastic task,
/// [`yield_if_busy`](crate::yield_if_busy) also gives way when the task has
/// used its grant, sending it back through admission.
///
/// An elastic task that spends more than half a grant in stretches longer
/// than the latency target between yield points is *coarse*: at most
/// `workers − 1` coarse polls run at once (at least one), so a worker stays
/// free for foreground tasks whatever the limit. Elastic tasks that yield
/// often are not capped and can use every worker.
///
/// Use it for bulk work (imports, index builds, compaction) *in addition to*
/// `yield_if_busy().await`: yield points keep latency low between them, and
/// admission catches work whose yield points are too far apart.
///
/// # Panics
/// Outside a runtime context, like [`spawn`].
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// let rows = rt.block_on(async {
///     brigade::spawn_elastic(async {
///         let mut rows = 0u64;
///         for _ in 0..10_000 {
///             rows += 1; // import one row
///             brigade::yield_if_busy().await;
///         }
///         rows
///     })
///     .await
/// });
/// assert_eq!(rows.unwrap(), 10_000);
/// # Ok::<(), std::io::Error>(())
/// ```
#[track_caller]
pub fn spawn_elastic<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let location = Location::caller();
    context::with_current("brigade::spawn_elastic", |handle| {
        handle.spawn_at(future, location, TaskClass::Elastic)
    })
}
