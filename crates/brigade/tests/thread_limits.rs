//! Threads that cannot be created (`RLIMIT_NPROC`: `pthread_create`
//! returns `EAGAIN`), each case in a child process of its own (see
//! `child/mod.rs`, which also says how the limit is made to bite when the
//! tests run as root):
//! - `Builder::build` returns a `BuildError` naming the thread that did not
//!   start (a worker, the monitor, the fallback driver thread) and joins
//!   the threads that did;
//! - `spawn_blocking` with no pool thread to run it cancels the closure
//!   (its `JoinHandle` returns a cancelled `JoinError`); with a pool thread
//!   busy, the closure waits for it and runs;
//! - a spare worker that cannot start is warned about once per spell, and
//!   the runtime carries on.

mod child;
mod common;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use child::{in_child, lift_thread_limit, limit_threads, threads};
use common::{TIMEOUT, wait_until};

fn builder(workers: usize) -> brigade::Builder {
    let mut builder = brigade::Builder::new();
    builder.worker_threads(workers);
    // The tokio runtime would start threads of its own first.
    #[cfg(feature = "tokio-compat")]
    builder.tokio_compat(false);
    builder
}

/// Bounds a wait by a brigade timer: `common::bounded`'s watchdog thread
/// could not start under the limit (and the parent bounds the child too).
async fn bounded<F: std::future::Future>(future: F) -> F::Output {
    brigade::time::timeout(TIMEOUT, future)
        .await
        .expect("did not complete in time: something hangs")
}

/// Builds with `extra` threads allowed; returns the error, after checking
/// that every thread the build started is gone again.
fn build_error(builder: &mut brigade::Builder, extra: u64) -> brigade::BuildError {
    limit_threads(extra);
    let before = threads();
    let error = builder.build().expect_err("the build must fail");
    lift_thread_limit();
    wait_until("the threads the build started have exited", || {
        threads() == before
    });
    let source = std::error::Error::source(&error).expect("the OS error");
    let kind = source.downcast_ref::<std::io::Error>().map(|e| e.kind());
    assert_eq!(kind, Some(std::io::ErrorKind::WouldBlock), "{error}");
    error
}

#[test]
fn build_fails_when_no_worker_can_start() {
    in_child("build_fails_when_no_worker_can_start", || {
        let error = build_error(&mut builder(4), 0);
        assert!(error.to_string().contains("a worker thread"), "{error}");
    });
}

#[test]
fn build_joins_the_workers_that_started() {
    in_child("build_joins_the_workers_that_started", || {
        let error = build_error(&mut builder(4), 2);
        assert!(error.to_string().contains("a worker thread"), "{error}");
    });
}

#[test]
fn build_fails_when_the_monitor_cannot_start() {
    in_child("build_fails_when_the_monitor_cannot_start", || {
        let error = build_error(&mut builder(2), 2);
        assert!(error.to_string().contains("the monitor thread"), "{error}");
    });
}

#[test]
fn build_fails_when_the_fallback_driver_thread_cannot_start() {
    in_child(
        "build_fails_when_the_fallback_driver_thread_cannot_start",
        || {
            let error = build_error(builder(2).driver_thread(true), 3);
            assert!(
                error.to_string().contains("the fallback driver thread"),
                "{error}"
            );
        },
    );
}

#[test]
fn spawn_blocking_with_no_pool_thread_is_cancelled_not_lost() {
    in_child(
        "spawn_blocking_with_no_pool_thread_is_cancelled_not_lost",
        || {
            let rt = builder(1).build().expect("runtime");
            let ran = Arc::new(AtomicBool::new(false));
            limit_threads(0);
            let flag = ran.clone();
            let refused = rt.spawn_blocking(move || flag.store(true, Ordering::SeqCst));
            let error = rt
                .block_on(bounded(refused))
                .expect_err("no thread can run it");
            assert!(error.is_cancelled(), "{error}");
            assert!(!ran.load(Ordering::SeqCst), "the closure never ran");
            assert_eq!(rt.metrics().blocking_queue_depth(), 0);
            // Threads can start again: so can blocking closures.
            lift_thread_limit();
            let answer = rt.block_on(bounded(rt.spawn_blocking(|| 6 * 7)));
            assert_eq!(answer.expect("runs once a thread can start"), 42);
        },
    );
}

#[test]
fn spawn_blocking_waits_for_a_busy_pool_thread() {
    in_child("spawn_blocking_waits_for_a_busy_pool_thread", || {
        let rt = builder(1).build().expect("runtime");
        let (started_tx, started) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let busy = rt.spawn_blocking(move || {
            started_tx.send(()).unwrap();
            released.recv_timeout(TIMEOUT).expect("released");
            1
        });
        started
            .recv_timeout(TIMEOUT)
            .expect("the first closure runs");
        limit_threads(0);
        let queued = rt.spawn_blocking(|| 2);
        assert_eq!(rt.metrics().blocking_queue_depth(), 1, "it waits, queued");
        assert_eq!(rt.metrics().num_blocking_threads(), 1);
        release.send(()).unwrap();
        let results = rt.block_on(bounded(async { (busy.await, queued.await) }));
        assert_eq!(results.0.unwrap(), 1);
        assert_eq!(results.1.expect("run by the thread that freed up"), 2);
        lift_thread_limit();
    });
}

/// Counts the `brigade::compensation` events that report a spare thread
/// that could not start, by level.
#[derive(Default, Clone)]
struct SpareFailures(Arc<SpareCounts>);

#[derive(Default)]
struct SpareCounts {
    warnings: AtomicUsize,
    retries: AtomicUsize,
    /// At any other level.
    others: AtomicUsize,
}

impl SpareCounts {
    fn all(&self) -> usize {
        [&self.warnings, &self.retries, &self.others]
            .iter()
            .map(|count| count.load(Ordering::SeqCst))
            .sum()
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for SpareFailures {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let meta = event.metadata();
        let is_spare_failure =
            meta.target() == "brigade::compensation" && meta.fields().field("error").is_some();
        if !is_spare_failure {
            return;
        }
        let counter = match *meta.level() {
            tracing::Level::WARN => &self.0.warnings,
            tracing::Level::DEBUG => &self.0.retries,
            _ => &self.0.others,
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_spare_that_cannot_start_is_warned_about_once_per_spell() {
    in_child(
        "a_spare_that_cannot_start_is_warned_about_once_per_spell",
        || {
            use tracing_subscriber::layer::SubscriberExt;
            let failures = SpareFailures::default();
            let subscriber = tracing_subscriber::registry().with(failures.clone());
            tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");

            let rt = builder(1)
                .compensation_threshold(Some(Duration::from_millis(2)))
                .build()
                .expect("runtime");
            limit_threads(0);
            let (release, released) = mpsc::channel::<()>();
            // The only worker is stuck in a blocking call while a task waits.
            let stuck = rt.spawn(async move {
                released.recv_timeout(TIMEOUT).expect("released");
            });
            let waiting = rt.spawn(async { 7 });
            wait_until("the monitor retried a spare more than once", || {
                failures.0.all() >= 3
            });
            assert_eq!(failures.0.warnings.load(Ordering::SeqCst), 1);
            assert_eq!(failures.0.others.load(Ordering::SeqCst), 0);
            assert_eq!(rt.metrics().compensations(), 0, "no spare could start");
            // The runtime carries on once the stuck worker returns.
            release.send(()).unwrap();
            let results = rt.block_on(bounded(async { (stuck.await, waiting.await) }));
            results.0.expect("the stuck task completes");
            assert_eq!(results.1.expect("the waiting task runs"), 7);
            assert_eq!(failures.0.warnings.load(Ordering::SeqCst), 1);
            lift_thread_limit();
        },
    );
}
