//! What a cooperative yield point costs: brigade's `yield_if_busy` and
//! `yield_now` against tokio's `yield_now` and `consume_budget`.
//!
//! Group `yield_call` reports the time per call of:
//! - `brigade_yield_if_busy/idle_worker`: `yield_if_busy().await` while the
//!   runtime has an idle worker (the fast path);
//! - `empty_await`: the same loop awaiting `std::future::ready(())`, the
//!   floor that any await in an async loop costs (subtract it to get what
//!   `yield_if_busy` adds);
//! - `brigade_yield_if_busy/idle_worker_no_detector`: the fast path on a
//!   runtime with the long-poll detector and compensation off, so without
//!   its note of the yield point (see `context::note_yield_point`);
//! - `brigade_yield_if_busy/all_busy`: `yield_if_busy().await` while every
//!   other worker is busy spinning but no queue holds work (the slow path's
//!   cheap checks, which decide to carry on);
//! - `brigade_yield_now`: `brigade::yield_now().await` (a full trip through
//!   the scheduler);
//! - `tokio_yield_now`: `tokio::task::yield_now().await`;
//! - `tokio_consume_budget`: `tokio::task::coop::consume_budget().await`
//!   (yields once per exhausted coop budget).
//!
//! Each runs its loop of calls inside one spawned task and times it there,
//! as a downstream crate's loop runs: this bench is a crate of its own, so
//! `yield_if_busy` is inlined across the crate boundary, as for any user.
//!
//! Group `yield_throughput` runs 2 × workers tasks, each doing a fixed number
//! of 10 µs units of CPU work (`brigade_examples::busy`'s calibrated busy
//! loop), with and without
//! `yield_if_busy().await` after each unit; afterwards the bench prints the
//! ratio of units per second with the yield to units per second without,
//! and how often `yield_if_busy` actually gave way. Tasks parked in the
//! yield queue do not count as waiting, so once the surplus tasks have been
//! picked up and the first yielders parked, the others find nothing waiting
//! and run on: expect only a few yields per run, and a ratio near 1.
//!
//! Every runtime here has `BENCH_WORKERS` worker threads, else 2.
//!
//! Run with:
//!
//! ```text
//! cargo bench -p brigade-benches --bench yield_overhead
//! BENCH_WORKERS=4 cargo bench -p brigade-benches --bench yield_overhead
//! cargo bench -p brigade-benches --bench yield_overhead -- --warm-up-time 0.5 --measurement-time 1
//! ```

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use brigade_examples::busy::{calibrate, spin};
use brigade_examples::harness::{
    Brigade, Rt, bench_workers, end_quietly_on_closed_pipe, exit_on_help,
};
use criterion::{Criterion, SamplingMode};

/// Worker threads when `BENCH_WORKERS` is not set (the machine this was
/// written for has 2 cores).
const DEFAULT_WORKERS: usize = 2;
/// Units of work per task in `yield_throughput`.
const UNITS_PER_TASK: usize = 500;
/// Length of one unit of work in `yield_throughput`, in µs.
const UNIT_US: u64 = 10;
/// Runs of each variant in the closing manual throughput comparison.
const RATIO_RUNS: usize = 15;

/// tokio with no driver, not even the timer that `harness::Tokio::build`
/// enables: a worker whose only task yields parks on its driver for no time
/// at each `yield_now`, and a timer would add its cost to every call.
fn tokio_runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .build()
        .expect("build tokio runtime")
}

/// Spins until `condition` holds; panics after `timeout` (so a scheduler
/// that never reaches the state fails the bench instead of hanging it).
fn wait_until(what: &str, timeout: Duration, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < timeout, "timed out waiting until {what}");
        std::hint::spin_loop();
    }
}

/// `iters` awaits of `call()`, timed from inside the loop's task.
async fn timed_loop<F: Future<Output = ()>>(iters: u64, call: impl Fn() -> F) -> Duration {
    let start = Instant::now();
    for _ in 0..iters {
        call().await;
    }
    start.elapsed()
}

/// `iters` calls of `yield_if_busy()` on a brigade worker, after waiting
/// until `idle` workers are idle.
async fn brigade_yield_if_busy_loop(iters: u64, idle: usize) -> Duration {
    let metrics = brigade::Handle::current().metrics();
    wait_until(
        "the expected number of workers are idle",
        Duration::from_secs(5),
        || metrics.num_idle_workers() == idle,
    );
    timed_loop(iters, brigade::yield_if_busy).await
}

/// `yield_if_busy`'s give-ways so far on `rt`, 0 before it is built.
fn yields(rt: &Option<brigade::Runtime>) -> u64 {
    rt.as_ref().map_or(0, |rt| rt.metrics().yields())
}

/// brigade with `workers` workers, as `harness::Brigade` builds it.
fn brigade_runtime(workers: usize) -> brigade::Runtime {
    Brigade::build(workers).0
}

// Every runtime here is built on first use, inside a benchmark's closure:
// criterion calls it only when it measures the benchmark, so `--list`, or a
// filter that leaves the benchmark out, starts none.
fn yield_call(c: &mut Criterion, workers: usize) {
    let mut group = c.benchmark_group("yield_call");

    let mut rt: Option<brigade::Runtime> = None;
    let yields_before = yields(&rt);
    // One task loops; the other worker has nothing to do and parks.
    group.bench_function("brigade_yield_if_busy/idle_worker", |b| {
        let rt = rt.get_or_insert_with(|| brigade_runtime(workers));
        b.iter_custom(|iters| {
            rt.block_on(rt.spawn(brigade_yield_if_busy_loop(iters, workers - 1)))
                .expect("measured task failed")
        });
    });
    report_yields("idle_worker", yields(&rt) - yields_before);

    // The floor: the same loop awaiting a future that is always ready, so
    // what the async loop itself costs (its state lives in the task's
    // future, in memory) is not charged to `yield_if_busy`.
    group.bench_function("empty_await", |b| {
        let rt = rt.get_or_insert_with(|| brigade_runtime(workers));
        b.iter_custom(|iters| {
            rt.block_on(rt.spawn(timed_loop(iters, || std::future::ready(()))))
                .expect("measured task failed")
        });
    });

    // workers - 1 tasks spin (never yielding, so no queue holds work) while
    // the measured task loops on the remaining worker.
    let yields_before = yields(&rt);
    group.bench_function("brigade_yield_if_busy/all_busy", |b| {
        let rt = rt.get_or_insert_with(|| brigade_runtime(workers));
        b.iter_custom(|iters| {
            let spin = Arc::new(AtomicBool::new(true));
            let started = Arc::new(AtomicUsize::new(0));
            let spinners: Vec<_> = (0..workers - 1)
                .map(|_| {
                    let spin = spin.clone();
                    let started = started.clone();
                    rt.spawn(async move {
                        started.fetch_add(1, Ordering::Relaxed);
                        while spin.load(Ordering::Relaxed) {
                            std::hint::spin_loop();
                        }
                    })
                })
                .collect();
            let spinning = ClearOnDrop(spin);
            wait_until("the spinners run", Duration::from_secs(5), || {
                started.load(Ordering::Relaxed) == workers - 1
            });
            let elapsed = rt
                .block_on(rt.spawn(brigade_yield_if_busy_loop(iters, 0)))
                .expect("measured task failed");
            drop(spinning);
            rt.block_on(async {
                for spinner in spinners {
                    spinner.await.expect("spinner failed");
                }
            });
            elapsed
        });
    });
    report_yields("all_busy", yields(&rt) - yields_before);

    group.bench_function("brigade_yield_now", |b| {
        let rt = rt.get_or_insert_with(|| brigade_runtime(workers));
        b.iter_custom(|iters| {
            rt.block_on(rt.spawn(timed_loop(iters, brigade::yield_now)))
                .expect("measured task failed")
        });
    });
    drop(rt);

    // The fast path without its note to the long-poll detector (which the
    // compensation for stuck workers also reads): both switched off.
    let mut rt: Option<brigade::Runtime> = None;
    group.bench_function("brigade_yield_if_busy/idle_worker_no_detector", |b| {
        let rt = rt.get_or_insert_with(|| {
            brigade::Builder::new()
                .worker_threads(workers)
                .long_poll_threshold(None)
                .compensation_threshold(None)
                .build()
                .expect("build brigade runtime")
        });
        b.iter_custom(|iters| {
            rt.block_on(rt.spawn(brigade_yield_if_busy_loop(iters, workers - 1)))
                .expect("measured task failed")
        });
    });
    drop(rt);

    let mut rt: Option<tokio::runtime::Runtime> = None;
    group.bench_function("tokio_yield_now", |b| {
        let rt = rt.get_or_insert_with(|| tokio_runtime(workers));
        b.iter_custom(|iters| {
            rt.block_on(rt.spawn(timed_loop(iters, tokio::task::yield_now)))
                .expect("measured task failed")
        });
    });
    group.bench_function("tokio_consume_budget", |b| {
        let rt = rt.get_or_insert_with(|| tokio_runtime(workers));
        b.iter_custom(|iters| {
            rt.block_on(rt.spawn(timed_loop(iters, tokio::task::coop::consume_budget)))
                .expect("measured task failed")
        });
    });
    drop(rt);
    group.finish();
}

/// Clears its flag when dropped: the spinners stop even when a wait above
/// panics, so that the runtime's drop does not wait on them forever.
struct ClearOnDrop(Arc<AtomicBool>);

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// `yield_if_busy` should never give way when nothing waits for a worker.
fn report_yields(case: &str, yields: u64) {
    if yields != 0 {
        println!("note: yield_if_busy gave way {yields} times in the {case} case");
    }
}

/// One run of the throughput workload: `tasks` tasks of [`UNITS_PER_TASK`]
/// units of `spins` [`spin`] iterations each, with or without
/// `yield_if_busy` after each unit. Returns the wall time from the first
/// spawn to the last join.
fn throughput_run(
    rt: &brigade::Runtime,
    tasks: usize,
    spins: u64,
    yield_after_unit: bool,
) -> Duration {
    let start = Instant::now();
    let tasks: Vec<_> = (0..tasks)
        .map(|_| {
            rt.spawn(async move {
                for _ in 0..UNITS_PER_TASK {
                    std::hint::black_box(spin(spins));
                    if yield_after_unit {
                        brigade::yield_if_busy().await;
                    }
                }
            })
        })
        .collect();
    rt.block_on(async {
        for task in tasks {
            task.await.expect("worker task failed");
        }
    });
    start.elapsed()
}

fn yield_throughput(c: &mut Criterion, workers: usize) {
    let tasks = 2 * workers;
    // The runtime and the unit's spins (calibrated on as many threads as
    // the workload keeps busy), made when a benchmark first runs.
    let mut setup: Option<(brigade::Runtime, u64)> = None;
    let mut make = || (brigade_runtime(workers), calibrate(UNIT_US, workers));
    let mut group = c.benchmark_group("yield_throughput");
    group.sampling_mode(SamplingMode::Flat);
    group.bench_function("yield_if_busy", |b| {
        let (rt, spins) = setup.get_or_insert_with(&mut make);
        b.iter(|| throughput_run(rt, tasks, *spins, true));
    });
    group.bench_function("no_yield", |b| {
        let (rt, spins) = setup.get_or_insert_with(&mut make);
        b.iter(|| throughput_run(rt, tasks, *spins, false));
    });
    group.finish();

    // Criterion's report shows the two times; this prints their ratio, from
    // interleaved runs so that drift in machine load hits both alike; only
    // where the group ran (not for `--list`, nor when a filter left it out).
    let Some((rt, spins)) = setup else {
        return;
    };
    let yields_before = rt.metrics().yields();
    let mut with_yield = Vec::with_capacity(RATIO_RUNS);
    let mut without = Vec::with_capacity(RATIO_RUNS);
    for _ in 0..RATIO_RUNS {
        with_yield.push(throughput_run(&rt, tasks, spins, true));
        without.push(throughput_run(&rt, tasks, spins, false));
    }
    let yields = rt.metrics().yields() - yields_before;
    let units = (tasks * UNITS_PER_TASK) as f64;
    let rate = |runs: &mut Vec<Duration>| {
        runs.sort();
        units / runs[runs.len() / 2].as_secs_f64()
    };
    let (with_rate, without_rate) = (rate(&mut with_yield), rate(&mut without));
    println!(
        "yield_throughput: {tasks} tasks x {UNITS_PER_TASK} units of {UNIT_US} µs on \
         {workers} workers (median of {RATIO_RUNS} runs)\n  \
         with yield_if_busy: {with_rate:.0} units/s ({:.3} yields per unit)\n  \
         without:            {without_rate:.0} units/s\n  \
         ratio (with / without): {:.3}",
        yields as f64 / (units * RATIO_RUNS as f64),
        with_rate / without_rate,
    );
}

// `criterion_group!` would generate an undocumented `pub fn`; this is what
// it and `criterion_main!` expand to, minus that.
fn main() {
    end_quietly_on_closed_pipe();
    exit_on_help("yield_overhead", "BENCH_WORKERS=N (default 2)");
    // Defaults that keep the whole run short; command-line options override
    // them.
    let mut criterion = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let workers = bench_workers(DEFAULT_WORKERS);
    yield_call(&mut criterion, workers);
    yield_throughput(&mut criterion, workers);
    criterion.final_summary();
}
