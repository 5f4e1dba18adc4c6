//! The runtime abstraction shared by the brigade-vs-tokio benches
//! (`rt_compare`, `coopsched`): one [`Rt`] trait, implemented once for
//! brigade ([`Brigade`]) and once for tokio ([`Tokio`]), so that each
//! workload is written once and instantiated for both runtimes.
//!
//! Benchmark ids are chosen by each bench, not here: the benches name their
//! configurations differently.
//!
//! Each bench binary compiles its own copy of this module. Everything here
//! is used by every bench, except [`Rt::spawn_remote`] (not `coopsched`),
//! [`Rt::spawn`] and [`Rt::yield_now`] (not `timers`) and [`Rt::sleep`] (not `rt_compare`),
//! which carry `#[allow(dead_code)]` so that the other benches do not warn.

use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

/// The operations the workloads need, implemented for both runtimes.
pub(crate) trait Rt: Sized + 'static {
    /// The error a join handle resolves to when its task failed.
    type JoinError: Debug;
    /// The runtime's join handle.
    type JoinHandle<T: Send + 'static>: Future<Output = Result<T, Self::JoinError>> + Send + Unpin;

    /// A multi-thread runtime with `workers` worker threads (and a timer).
    fn build(workers: usize) -> Self;
    /// Runs `future` to completion on the calling thread.
    fn block_on<F: Future>(&self, future: F) -> F::Output;
    /// Spawns from outside the runtime, through its handle.
    #[allow(dead_code)] // Unused by `coopsched`.
    fn spawn_remote<F>(&self, future: F) -> Self::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;
    /// Spawns from inside the runtime (a task or `block_on`).
    #[allow(dead_code)] // Unused by `timers`.
    fn spawn<F>(future: F) -> Self::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;
    /// The runtime's unconditional yield.
    #[allow(dead_code)] // Unused by `timers`.
    fn yield_now() -> impl Future<Output = ()> + Send;
    /// The runtime's sleep.
    #[allow(dead_code)] // Unused by `rt_compare`.
    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send;
}

/// brigade's runtime, with scheduling-latency sampling set by
/// [`latency_sample_every`].
pub(crate) struct Brigade(brigade::Runtime);

impl Rt for Brigade {
    type JoinError = brigade::JoinError;
    type JoinHandle<T: Send + 'static> = brigade::JoinHandle<T>;

    fn build(workers: usize) -> Self {
        Brigade(
            brigade::Builder::new()
                .worker_threads(workers)
                .latency_sample_every(latency_sample_every())
                .build()
                .expect("build brigade runtime"),
        )
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.0.block_on(future)
    }

    fn spawn_remote<F>(&self, future: F) -> Self::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.0.spawn(future)
    }

    fn spawn<F>(future: F) -> Self::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        brigade::spawn(future)
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        brigade::yield_now()
    }

    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send {
        brigade::time::sleep(duration)
    }
}

/// tokio's multi-thread runtime, with its timer enabled.
pub(crate) struct Tokio(tokio::runtime::Runtime);

impl Rt for Tokio {
    type JoinError = tokio::task::JoinError;
    type JoinHandle<T: Send + 'static> = tokio::task::JoinHandle<T>;

    fn build(workers: usize) -> Self {
        Tokio(
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .enable_time()
                .build()
                .expect("build tokio runtime"),
        )
    }

    fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.0.block_on(future)
    }

    fn spawn_remote<F>(&self, future: F) -> Self::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.0.spawn(future)
    }

    fn spawn<F>(future: F) -> Self::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        tokio::spawn(future)
    }

    fn yield_now() -> impl Future<Output = ()> + Send {
        tokio::task::yield_now()
    }

    fn sleep(duration: Duration) -> impl Future<Output = ()> + Send {
        tokio::time::sleep(duration)
    }
}

/// Worker threads for both runtimes: `BENCH_WORKERS`, else `default`.
/// Panics if `BENCH_WORKERS` is set but not a positive integer.
pub(crate) fn workers(default: usize) -> usize {
    match std::env::var("BENCH_WORKERS") {
        Ok(value) => value
            .trim()
            .parse()
            .ok()
            .filter(|&n: &usize| n > 0)
            .unwrap_or_else(|| panic!("BENCH_WORKERS must be a positive integer, got {value:?}")),
        Err(_) => default,
    }
}

/// brigade's scheduling-latency sampling: `BENCH_LATENCY_SAMPLE_EVERY` if
/// set (0 turns sampling off, to measure its cost), else the default.
pub(crate) fn latency_sample_every() -> u32 {
    std::env::var("BENCH_LATENCY_SAMPLE_EVERY")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(brigade::DEFAULT_LATENCY_SAMPLE_EVERY)
}
