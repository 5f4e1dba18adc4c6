//! The soak test: one brigade runtime under mixed load for minutes, watching
//! for leaks (memory, file descriptors, tasks), failed or lost requests,
//! aborts that do not take and a runtime that will not drop.
//!
//! What runs, all on one runtime of `--workers` worker threads
//! (`soak/load.rs`):
//!
//! - **Foreground**: an echo server task on 127.0.0.1, and a client on a
//!   plain OS thread (blocking `std::net` socket, 2 s time-outs) sending a
//!   16-byte request every 1 ms and checking each reply byte for byte (it
//!   reconnects after a failure). Latency: write to last byte of the reply.
//! - **Background**: 4 `spawn` and 2 `spawn_elastic` tasks doing 10 µs CPU
//!   units with `yield_if_busy().await` between units.
//! - **Churn**: a task spawning batches of short tasks, `spawn_blocking`
//!   closures, and long-running tasks (a `yield_if_busy` loop, a `sleep`
//!   loop, a never-ready future) that it aborts after a random 0–10 ms.
//!   Awaiting an aborted handle must give a cancelled `JoinError` within 2 s
//!   (`brigade::time::timeout`); anything else is an abort failure.
//!
//! Every `--sample-secs` a line: elapsed time, RSS (`VmRSS`), live heap
//! ([`LiveHeap`]), open fds, requests ok / failed so far, live tasks
//! (`RuntimeMetrics::num_alive_tasks`). Failures are printed to stderr as
//! they happen, with their time, marked when they come after the stop
//! signal (while the load winds down).
//!
//! At the end it stops everything and drops the runtime, each step bounded
//! by 10 s, and prints a summary (`soak/report.rs`). Reading it: the
//! *post-warm-up* sample is the first at or after 1 minute (the first
//! sample in shorter runs). PASS needs RSS (its last value and its maximum
//! since warm-up) no more than 5 % above the post-warm-up value, the last
//! fd count equal to the post-warm-up one, no failed request (time-out,
//! mismatch, error) or lost one (sent, no outcome), no abort or churn-task
//! failure, and everything stopped in time. Otherwise the verdict is FAIL
//! with the reasons.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use brigade::{JoinError, JoinHandle, Runtime};

use crate::busy::calibrate;

mod config;
mod load;
mod report;
pub use config::{Config, HELP};
pub use report::LiveHeap;

const REQUEST_LEN: usize = 16;
const REQUEST_PERIOD: Duration = Duration::from_millis(1);
const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// Bound on each await of a churn task's handle.
const JOIN_TIMEOUT: Duration = Duration::from_secs(2);
/// Bound on stopping the client and the tasks at the end, and on the drop.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
const WARM_UP: Duration = Duration::from_secs(60);
const RSS_TOLERANCE: f64 = 0.05;
const SPAWN_TASKS: usize = 4;
const ELASTIC_TASKS: usize = 2;
const UNIT_US: u64 = 10;
const SHORT_BATCH: usize = 8;
/// Failure messages printed as they happen; later ones are only counted.
const MAX_REPORTED: u64 = 20;

/// Counters written by the client and the churn task, read by the report.
#[derive(Default)]
struct Counters {
    stop: AtomicBool,
    sent: AtomicU64,
    ok: AtomicU64,
    failed: AtomicU64,
    spawned: AtomicU64,
    completed: AtomicU64,
    aborted: AtomicU64,
    abort_failures: AtomicU64,
    task_failures: AtomicU64,
    /// Failures of any kind after the stop signal (while the load winds down).
    while_stopping: AtomicU64,
    reported: AtomicU64,
}

struct Shared {
    started: Instant,
    count: Counters,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.count.stop.load(Relaxed)
    }

    /// Counts a failure in `counter` and prints the first few as they happen.
    fn fail(&self, counter: &AtomicU64, message: std::fmt::Arguments<'_>) {
        counter.fetch_add(1, Relaxed);
        let phase = if self.stopping() {
            self.count.while_stopping.fetch_add(1, Relaxed);
            " (after the stop signal)"
        } else {
            ""
        };
        let reported = self.count.reported.fetch_add(1, Relaxed);
        if reported < MAX_REPORTED {
            let at = self.started.elapsed().as_secs_f64();
            eprintln!("[{at:7.1} s] FAILURE{phase}: {message}");
        } else if reported == MAX_REPORTED {
            eprintln!("(further failures are only counted)");
        }
    }
}

/// Runs the soak and prints the summary; `Ok(true)` on PASS. `heap` must be
/// the program's global allocator, for the live-heap figures.
///
/// # Errors
/// Without Linux's `/proc/self`, or if the runtime, the listener or the
/// client thread cannot be set up.
pub fn run(config: &Config, heap: &LiveHeap) -> io::Result<bool> {
    if report::rss_kib().is_none() || report::open_fds().is_none() {
        return Err(io::Error::other("needs Linux's /proc/self"));
    }
    let iterations = calibrate(UNIT_US, config.workers);
    let rt = brigade::Builder::new()
        .worker_threads(config.workers)
        .build()?;
    let listener = rt.block_on(brigade::net::TcpListener::bind("127.0.0.1:0"))?;
    let addr = listener.local_addr()?;
    println!(
        "soak: {:.2} min, {} workers, a line every {:?}; echo server on {addr}; \
         {SPAWN_TASKS} spawn + {ELASTIC_TASKS} spawn_elastic background tasks × {UNIT_US} µs",
        config.duration.as_secs_f64() / 60.0,
        config.workers,
        config.sample_every,
    );
    let shared = Arc::new(Shared {
        started: Instant::now(),
        count: Counters::default(),
    });
    let load = load::start(&rt, listener, addr, iterations, &shared)?;
    let samples = report::sample_until_end(config, &shared, &rt, heap);
    let stopped = stop(rt, load, &shared);
    Ok(report::summarize(&samples, &shared.count, stopped))
}

/// Stops the load, then drops the runtime; every wait is bounded by one
/// deadline ([`STOP_TIMEOUT`] from now), the drop by its own.
fn stop(rt: Runtime, load: load::Load, shared: &Shared) -> report::Stopped {
    let load::Load {
        server,
        background,
        churn,
        client,
    } = load;
    let mut failures: Vec<String> = Vec::new();
    let mut not_stopped = |what: &str| failures.push(format!("{what} within {STOP_TIMEOUT:?}"));
    shared.count.stop.store(true, Relaxed);
    let deadline = Instant::now() + STOP_TIMEOUT;
    let latencies = match wait_until(deadline, || client.is_finished()) {
        true => client.join().ok(),
        false => {
            not_stopped("the client thread did not stop");
            None
        }
    };
    let mut units = 0;
    for handle in background {
        match finish(&rt, handle, deadline) {
            Some(Ok(done)) => units += done,
            _ => not_stopped("a background task did not stop with its result"),
        }
    }
    if !matches!(finish(&rt, churn, deadline), Some(Ok(()))) {
        not_stopped("the churn task did not stop with its result");
    }
    server.abort();
    if !matches!(finish(&rt, server, deadline), Some(Err(e)) if e.is_cancelled()) {
        not_stopped("the aborted echo server did not end cancelled");
    }
    let (alive_after_stop, runtime_spawned) = {
        let metrics = rt.metrics();
        (metrics.num_alive_tasks(), metrics.spawned_tasks_count())
    };
    let drop_time = drop_within(rt, STOP_TIMEOUT);
    if drop_time.is_none() {
        not_stopped("dropping the runtime did not finish");
    }
    report::Stopped {
        latencies,
        units,
        alive_after_stop,
        runtime_spawned,
        drop_time,
        failures,
    }
}

/// Drops `rt` on another thread; how long the drop took, or `None` if it
/// took longer than `limit`.
fn drop_within(rt: Runtime, limit: Duration) -> Option<Duration> {
    let (dropped_tx, dropped_rx) = std::sync::mpsc::channel();
    let drop_started = Instant::now();
    std::thread::spawn(move || {
        drop(rt);
        let _ = dropped_tx.send(drop_started.elapsed());
    });
    dropped_rx.recv_timeout(limit).ok()
}

/// Polls `done` until it holds (`true`) or `deadline` passes (`false`).
/// Plain polling: it relies on neither the runtime's timers nor its wakers.
fn wait_until(deadline: Instant, done: impl Fn() -> bool) -> bool {
    while !done() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// The result of `task`, or `None` if it is not finished by `by`.
fn finish<T>(rt: &Runtime, task: JoinHandle<T>, by: Instant) -> Option<Result<T, JoinError>> {
    wait_until(by, || task.is_finished()).then(|| rt.block_on(task))
}
