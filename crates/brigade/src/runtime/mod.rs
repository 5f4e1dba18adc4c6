//! The runtime, under tokio's names: [`Runtime`], [`Builder`] (with
//! [`Builder::new_multi_thread`] and [`Builder::new_current_thread`]),
//! [`Handle`] and [`EnterGuard`], [`TryCurrentError`], [`BuildError`] and
//! [`RuntimeMetrics`]. `brigade::Runtime`, `brigade::Builder` and
//! `brigade::Handle` are the same types.
//!
//! # Examples
//!
//! A library that runs async code for blocking callers ports from tokio by
//! renaming `tokio::runtime` to `brigade::runtime`:
//!
//! ```
//! use brigade::runtime::{Builder, Runtime};
//!
//! fn blocking_client() -> std::io::Result<Runtime> {
//!     Ok(Builder::new_multi_thread().worker_threads(2).enable_all().build()?)
//! }
//!
//! let rt = blocking_client()?;
//! assert_eq!(rt.block_on(async { rt.spawn(async { 1 + 1 }).await.unwrap() }), 2);
//! # Ok::<(), std::io::Error>(())
//! ```
//
// ## Words
// - A worker thread **parks** when it blocks until woken: on its own
//   condvar or inside the driver's poll (`driver/park.rs`,
//   `Driver::park_in_poll`).
// - A worker **waits for work** when it found none: it counts itself idle,
//   re-checks every queue, parks, and counts itself back
//   (`Idle::wait_for_work`, `scheduler/idle.rs`).
// - A task **gives way** to waiting work at a yield point in one of two
//   ways (C5 of the policy): it **moves to the back** of its worker's
//   deque, or it **steps aside** into the yield queue, where it **waits**
//   until a worker has nothing else to do (`yield_queue/`).
// - A busy worker's **epoch** bounds how often it does its expensive
//   checks (`src/epoch.rs`).

mod builder;
pub(crate) mod compensation;
pub(crate) mod context;
pub(crate) mod cpu_limit;
mod enter;
mod handle;
mod identity;
pub(crate) mod lifecycle;
#[cfg(feature = "metrics")]
mod metrics_publish;
mod metrics_source;
pub(crate) mod scheduler;
mod shared;
pub(crate) mod threads;

#[cfg(all(test, loom))]
mod loom_models;
#[cfg(all(test, not(loom)))]
mod tests;

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

pub use crate::task::spawn::{spawn, spawn_blocking, spawn_elastic};
pub use builder::BuildError;
pub use builder::{
    Builder, DEFAULT_COMPENSATION_THRESHOLD, DEFAULT_LATENCY_SAMPLE_EVERY, DEFAULT_MAX_YIELD_DELAY,
    WORKER_THREADS_ENV,
};
pub use cpu_limit::CpuLimit;
pub use enter::{EnterGuard, TryCurrentError};
pub use handle::Handle;
pub use identity::{Id, RuntimeFlavor};
pub(crate) use shared::Shared;

use crate::driver::Driver;
pub use crate::metrics::RuntimeMetrics;
use crate::sync::thread::{self, Thread};
use crate::task::JoinHandle;
use lifecycle::shutdown::WorkerThreads;

/// A brigade runtime: a pool of worker threads running async tasks, a
/// blocking pool for `spawn_blocking`, and the yield queue behind
/// [`yield_if_busy`](crate::yield_if_busy).
///
/// Dropping the runtime shuts it down: workers stop after their current
/// poll, every unfinished task's future is dropped (its `JoinHandle`
/// resolves as cancelled), and the call waits for the worker threads and for
/// running `spawn_blocking` closures, and runs the [`fs`](crate::fs)
/// writes still queued (other queued closures are dropped). Tasks that never end by themselves
/// end too: a loop on [`yield_if_busy`](crate::yield_if_busy) or
/// [`yield_now`](crate::yield_now) gives way at its next call, and tasks
/// waiting on I/O, timers or nothing at all are dropped where they wait.
/// Only a task that never reaches a yield point (a blocking call, a loop
/// with no `.await`) holds up the drop, for as long as its poll lasts; use
/// [`shutdown_timeout`](Self::shutdown_timeout) to bound that wait. The
/// steps, in order, are written down in `runtime/lifecycle/shutdown.rs`.
///
/// # Examples
///
/// ```
/// let rt = brigade::Runtime::new()?;
/// let answer = rt.block_on(async {
///     let task = brigade::spawn(async { 40 + 2 });
///     task.await.unwrap()
/// });
/// assert_eq!(answer, 42);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Runtime {
    handle: Handle,
    workers: Option<WorkerThreads>,
}

impl Runtime {
    /// A runtime with the default settings (see [`Builder::new`]): one
    /// worker per available CPU, or `BRIGADE_WORKER_THREADS`.
    ///
    /// # Errors
    /// If `BRIGADE_WORKER_THREADS` is invalid or a thread cannot be started
    /// (the [`BuildError`] converted to an [`std::io::Error`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = brigade::Runtime::new()?;
    /// assert!(rt.metrics().num_workers() >= 1);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn new() -> std::io::Result<Runtime> {
        Ok(Builder::new().build()?)
    }

    /// A handle to this runtime (tokio's signature: clone it to keep one).
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Runs `future` to completion on the calling thread, while the workers
    /// run spawned tasks (on a current-thread runtime, this thread runs
    /// them too, in turns with `future`: see
    /// [`Builder::new_current_thread`]). Inside it, [`spawn`] spawns onto
    /// this runtime.
    ///
    /// # Panics
    /// If called from a worker thread or from inside another `block_on`
    /// (that would block a thread that is driving async code).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = brigade::Runtime::new()?;
    /// let greeting = rt.block_on(async {
    ///     // Timers, sockets and `spawn` all work here.
    ///     brigade::time::sleep(Duration::from_millis(1)).await;
    ///     brigade::spawn(async { "hello" }).await.unwrap()
    /// });
    /// assert_eq!(greeting, "hello");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.handle.block_on(future)
    }

    /// Spawns a task on this runtime. See [`spawn`].
    ///
    /// Unlike [`brigade::spawn`](crate::spawn) it works from any thread,
    /// outside the runtime too.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = brigade::Runtime::new()?;
    /// // From `main`, outside `block_on`: the task starts on a worker at once.
    /// let task = rt.spawn(async { (1..=4u32).product::<u32>() });
    /// assert_eq!(rt.block_on(task).unwrap(), 24);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[track_caller]
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }

    /// Spawns an elastic task on this runtime. See [`spawn_elastic`].
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = brigade::Runtime::new()?;
    /// // Bulk work throttled by elastic admission, spawned from `main`.
    /// let compaction = rt.spawn_elastic(async {
    ///     let mut merged = 0u32;
    ///     for _segment in 0..1_000 {
    ///         merged += 1;
    ///         brigade::yield_if_busy().await;
    ///     }
    ///     merged
    /// });
    /// assert_eq!(rt.block_on(compaction).unwrap(), 1_000);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[track_caller]
    pub fn spawn_elastic<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn_elastic(future)
    }

    /// Runs a blocking closure on the blocking pool. See
    /// [`spawn_blocking`].
    #[track_caller]
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.handle.spawn_blocking(f)
    }

    /// This runtime's metrics.
    ///
    /// # Examples
    ///
    /// Whether foreground work is hurt: the p99 scheduling latency (time
    /// from runnable to polled), here over one stretch of work.
    ///
    /// ```
    /// let rt = brigade::Builder::new().latency_sample_every(1).build()?;
    /// let metrics = rt.metrics();
    /// let before = metrics.scheduling_latency();
    /// rt.block_on(async {
    ///     for _ in 0..100 {
    ///         brigade::spawn(async {}).await.unwrap();
    ///     }
    /// });
    /// let window = metrics.scheduling_latency().since(&before);
    /// assert!(window.count() > 0);
    /// println!(
    ///     "p99 {:?}, max {:?}; yield_if_busy gave way {} times",
    ///     window.quantile(0.99),
    ///     window.max(),
    ///     metrics.yields()
    /// );
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn metrics(&self) -> RuntimeMetrics {
        self.handle.metrics()
    }

    /// Shuts the runtime down like dropping it does, but waits at most
    /// `timeout` for worker threads and running `spawn_blocking` closures;
    /// threads still running then are left to finish on their own.
    pub fn shutdown_timeout(mut self, timeout: Duration) {
        self.shutdown(Some(Instant::now() + timeout));
    }

    /// Shuts the runtime down without waiting for its threads: like
    /// [`shutdown_timeout`](Self::shutdown_timeout) with a zero timeout.
    /// Every task not running is dropped here; worker threads in a poll and
    /// running `spawn_blocking` closures finish it on their own, and the
    /// blocking threads run the queued [`fs`](crate::fs) writes. Unlike
    /// dropping the runtime, it never waits for a poll, so it may be called
    /// from async code.
    ///
    /// # Examples
    ///
    /// ```
    /// let rt = brigade::runtime::Builder::new_current_thread().build()?;
    /// let pending = rt.spawn(std::future::pending::<()>());
    /// rt.shutdown_background();
    /// // The task was dropped with the runtime.
    /// let error = futures_lite::future::block_on(pending).unwrap_err();
    /// assert!(error.is_cancelled());
    /// # Ok::<(), brigade::BuildError>(())
    /// ```
    pub fn shutdown_background(self) {
        self.shutdown_timeout(Duration::ZERO);
    }

    /// The shutdown sequence: see `shutdown.rs`.
    fn shutdown(&mut self, deadline: Option<Instant>) {
        if let Some(threads) = self.workers.take() {
            lifecycle::shutdown::shut_down(&self.handle.shared, threads, deadline);
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown(None);
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("workers", &self.handle.shared.num_workers())
            .finish()
    }
}

impl Handle {
    /// Runs `future` to completion on the calling thread. See
    /// [`Runtime::block_on`].
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        if self.shared.current_thread.is_some() {
            let shared = self.shared.clone();
            return context::run_block_on(self.clone(), || {
                scheduler::current_thread::block_on(&shared, future)
            });
        }
        let driver = self.shared.driver.clone();
        context::run_block_on(self.clone(), || drive(future, driver))
    }

    /// This runtime's metrics.
    pub fn metrics(&self) -> RuntimeMetrics {
        RuntimeMetrics::new(self.shared.clone())
    }
}

/// `block_on`'s loop: polls `future` on this thread, sleeping between
/// wake-ups. It holds the runtime's clock (`driver/clock.rs`) while it
/// polls, and gives the hold up only to park: a wake-up takes a new one
/// for it (see [`ThreadSignal`]), so a paused clock never auto-advances
/// while this thread has work.
fn drive<F: Future>(future: F, driver: Arc<Driver>) -> F::Output {
    let mut future = std::pin::pin!(future);
    let signal = Arc::new(ThreadSignal {
        thread: thread::current(),
        notified: std::sync::atomic::AtomicBool::new(false),
        driver,
    });
    let waker = Waker::from(signal.clone());
    let mut cx = Context::from_waker(&waker);
    let clock_hold = ClockHold::new(&signal.driver);
    let _done = SignalDone(&signal);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        while !signal
            .notified
            .swap(false, std::sync::atomic::Ordering::Acquire)
        {
            clock_hold.park();
        }
        // The wake-up's hold: this thread's own covers it from here.
        signal.driver.release_hold();
    }
}

/// Ends a [`ThreadSignal`] when `block_on` returns or unwinds: the flag
/// stays set for good, so a late wake-up (a waker kept somewhere) gives its
/// hold back at once, and a pending wake-up's hold is released here.
struct SignalDone<'a>(&'a ThreadSignal);

impl Drop for SignalDone<'_> {
    fn drop(&mut self) {
        let signal = self.0;
        if signal
            .notified
            .swap(true, std::sync::atomic::Ordering::AcqRel)
        {
            signal.driver.release_hold();
        }
    }
}

/// The hold a `block_on` thread keeps on its runtime's clock while it is
/// not parked; released when it returns or unwinds.
struct ClockHold<'a>(&'a Driver);

impl<'a> ClockHold<'a> {
    fn new(driver: &'a Driver) -> Self {
        driver.clock().acquire_hold();
        ClockHold(driver)
    }

    /// Parks this thread, without the hold while it sleeps.
    fn park(&self) {
        self.0.release_hold();
        thread::park();
        self.0.clock().acquire_hold();
    }
}

impl Drop for ClockHold<'_> {
    fn drop(&mut self) {
        self.0.release_hold();
    }
}

/// Wakes a thread blocked in `block_on`. `notified` is set (Release) before
/// the unpark and consumed (Acquire) by the blocked thread, so a wake that
/// lands between its poll and its park is not lost; `thread::park`'s own
/// token covers the unpark-before-park case.
///
/// Each wake-up that sets `notified` brings a hold on the clock, taken
/// before the flag is set and released by the blocked thread once it has
/// consumed the flag (holding its own by then): a paused clock cannot
/// auto-advance between the wake and the poll. A wake that finds the flag
/// already set gives its hold back at once.
///
/// `notified` is a `std` atomic even under loom: the waker travels to the
/// waking thread through `async-task`'s own atomics, which loom cannot see,
/// so a loom atomic here would look unsynchronised to it. The park and the
/// unpark are loom's, so a model still checks that no wake-up is lost.
struct ThreadSignal {
    thread: Thread,
    notified: std::sync::atomic::AtomicBool,
    driver: Arc<Driver>,
}

impl Wake for ThreadSignal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.driver.clock().acquire_hold();
        if self
            .notified
            .swap(true, std::sync::atomic::Ordering::Release)
        {
            self.driver.release_hold();
        } else {
            self.thread.unpark();
        }
    }
}
