//! brigade against tokio's multi-thread scheduler on the workloads of tokio's
//! own scheduler benchmarks (spawning, yielding, ping-pong, chained spawns).
//!
//! Each workload is one criterion group holding two benchmarks, `brigade` and
//! `tokio`, run on runtimes with the same number of worker threads, so the
//! report puts e.g. `spawn_many_local/brigade` next to
//! `spawn_many_local/tokio`. Each workload is written once, against the small
//! [`Rt`] trait (the comparison harness, `brigade_examples::harness`, shared
//! with the other benches), and instantiated for both runtimes.
//!
//! Worker threads: the `BENCH_WORKERS` environment variable, else 4 (as in
//! tokio's suite). `BENCH_LATENCY_SAMPLE_EVERY` sets brigade's
//! scheduling-latency sampling (0 turns it off, to measure its cost).
//!
//! Run with:
//!
//! ```text
//! cargo bench -p brigade-benches --bench rt_compare
//! BENCH_WORKERS=2 cargo bench -p brigade-benches --bench rt_compare -- ping_pong
//! cargo bench -p brigade-benches --bench rt_compare -- --warm-up-time 0.5 --measurement-time 1
//! ```

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use criterion::{Bencher, Criterion, SamplingMode};

use brigade_examples::harness::{Brigade, Rt, Tokio, bench_workers};

/// Tasks spawned per iteration by the `spawn_many_*` workloads.
const NUM_SPAWN: usize = 10_000;
/// Remote spawns per iteration in `spawn_many_remote_busy2`.
const NUM_SPAWN_BUSY2: usize = 1_000;
/// Tasks in `yield_many`.
const YIELD_TASKS: usize = 200;
/// Yields per task in `yield_many`.
const YIELDS_PER_TASK: usize = 1_000;
/// Round trips per iteration in `ping_pong`.
const NUM_PINGS: usize = 1_000;
/// Length of the task chain in `chained_spawn`.
const CHAIN_LEN: usize = 1_000;
/// How long `stall` keeps its thread busy.
const STALL: Duration = Duration::from_micros(10);
/// Worker threads when `BENCH_WORKERS` is not set.
const DEFAULT_WORKERS: usize = 4;

/// Keeps the thread busy for [`STALL`], yielding the OS thread as it spins.
fn stall() {
    let start = Instant::now();
    while start.elapsed() < STALL {
        std::thread::yield_now();
    }
}

/// A workload, instantiated for one runtime.
type Workload<R> = fn(&mut Bencher<'_>, &R, usize);

/// One criterion group per workload: the same workload on brigade, then on
/// tokio. Each runtime is built once, before its benchmark, and dropped
/// after it, so the two never compete for the CPU.
fn compare(
    c: &mut Criterion,
    name: &str,
    on_brigade: Workload<Brigade>,
    on_tokio: Workload<Tokio>,
) {
    let workers = bench_workers(DEFAULT_WORKERS);
    let mut group = c.benchmark_group(name);
    // Iterations take milliseconds: equal-sized samples keep the run short.
    group.sampling_mode(SamplingMode::Flat);
    run_on(&mut group, workers, on_brigade);
    run_on(&mut group, workers, on_tokio);
    group.finish();
}

/// Benchmark `brigade` or `tokio` in `group`: `workload` on a fresh runtime
/// of type `R`.
fn run_on<R: Rt>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    workers: usize,
    workload: Workload<R>,
) {
    let rt = R::build(workers);
    group.bench_function(R::KIND.name(), |b| workload(b, &rt, workers));
    drop(rt);
}

/// Inside `block_on`, spawns [`NUM_SPAWN`] tasks that count down a shared
/// counter; the last one signals the channel `block_on` is blocked on.
fn spawn_many_local<R: Rt>(b: &mut Bencher<'_>, rt: &R, _workers: usize) {
    let remaining = Arc::new(AtomicUsize::new(0));
    let (done_tx, done_rx) = mpsc::sync_channel::<()>(1);
    b.iter(|| {
        remaining.store(NUM_SPAWN, Ordering::Relaxed);
        rt.block_on(async {
            for _ in 0..NUM_SPAWN {
                let remaining = remaining.clone();
                let done_tx = done_tx.clone();
                drop(R::spawn(async move {
                    if remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                        done_tx.send(()).expect("bench thread gone");
                    }
                }));
            }
            // Blocks the `block_on` thread, as tokio's benchmark does.
            done_rx.recv().expect("tasks gone");
        });
    });
}

/// Spawns `count` empty tasks through the handle, then awaits them all.
fn spawn_remote_and_join<R: Rt>(rt: &R, count: usize, handles: &mut Vec<R::JoinHandle<()>>) {
    handles.extend((0..count).map(|_| rt.spawn_remote(async {})));
    rt.block_on(async {
        for handle in handles.drain(..) {
            handle.await.expect("empty task failed");
        }
    });
}

/// [`NUM_SPAWN`] remote spawns onto an idle runtime.
fn spawn_many_remote_idle<R: Rt>(b: &mut Bencher<'_>, rt: &R, _workers: usize) {
    let mut handles = Vec::with_capacity(NUM_SPAWN);
    b.iter(|| spawn_remote_and_join(rt, NUM_SPAWN, &mut handles));
}

/// [`NUM_SPAWN`] remote spawns while 2 × workers tasks keep the runtime busy
/// with `yield_now` + [`stall`] loops. The busy tasks start before each
/// sample and are stopped (and awaited) after it.
fn spawn_many_remote_busy1<R: Rt>(b: &mut Bencher<'_>, rt: &R, workers: usize) {
    let running = Arc::new(AtomicBool::new(true));
    let busy: Vec<_> = (0..2 * workers)
        .map(|_| {
            let running = running.clone();
            rt.spawn_remote(async move {
                while running.load(Ordering::Relaxed) {
                    R::yield_now().await;
                    stall();
                }
            })
        })
        .collect();
    let mut handles = Vec::with_capacity(NUM_SPAWN);
    b.iter(|| spawn_remote_and_join(rt, NUM_SPAWN, &mut handles));
    running.store(false, Ordering::Relaxed);
    rt.block_on(async {
        for task in busy {
            task.await.expect("busy task failed");
        }
    });
}

/// One link of a busy chain: stall, then spawn the next link, until
/// `running` is cleared; the last link reports on `stopped`.
fn busy_link<R: Rt>(running: Arc<AtomicBool>, stopped: mpsc::Sender<()>) {
    drop(R::spawn(async move {
        if running.load(Ordering::Relaxed) {
            stall();
            busy_link::<R>(running, stopped);
        } else {
            stopped.send(()).expect("bench thread gone");
        }
    }));
}

/// [`NUM_SPAWN_BUSY2`] remote spawns while `workers` chains of tasks (each
/// task stalls, then spawns the next) keep the runtime busy. The chains
/// start before each sample and are stopped (and waited for) after it.
fn spawn_many_remote_busy2<R: Rt>(b: &mut Bencher<'_>, rt: &R, workers: usize) {
    let running = Arc::new(AtomicBool::new(true));
    let (stopped_tx, stopped_rx) = mpsc::channel();
    for _ in 0..workers {
        let running = running.clone();
        let stopped_tx = stopped_tx.clone();
        drop(rt.spawn_remote(async move { busy_link::<R>(running, stopped_tx) }));
    }
    drop(stopped_tx);
    let mut handles = Vec::with_capacity(NUM_SPAWN_BUSY2);
    b.iter(|| spawn_remote_and_join(rt, NUM_SPAWN_BUSY2, &mut handles));
    running.store(false, Ordering::Relaxed);
    for _ in 0..workers {
        stopped_rx.recv().expect("busy chain lost");
    }
}

/// [`YIELD_TASKS`] tasks, spawned from the bench thread, each call
/// `yield_now().await` [`YIELDS_PER_TASK`] times; the bench thread waits for
/// all of them.
fn yield_many<R: Rt>(b: &mut Bencher<'_>, rt: &R, _workers: usize) {
    let (done_tx, done_rx) = mpsc::sync_channel::<()>(YIELD_TASKS);
    b.iter(|| {
        for _ in 0..YIELD_TASKS {
            let done_tx = done_tx.clone();
            drop(rt.spawn_remote(async move {
                for _ in 0..YIELDS_PER_TASK {
                    R::yield_now().await;
                }
                done_tx.send(()).expect("bench thread gone");
            }));
        }
        for _ in 0..YIELD_TASKS {
            done_rx.recv().expect("yielding task lost");
        }
    });
}

/// [`NUM_PINGS`] tasks, spawned by one task, each exchange a message with a
/// helper task over two `tokio::sync::oneshot` channels (runtime-agnostic,
/// so both runtimes pay the same channel cost); the last to finish signals
/// the channel `block_on` is blocked on.
fn ping_pong<R: Rt>(b: &mut Bencher<'_>, rt: &R, _workers: usize) {
    let remaining = Arc::new(AtomicUsize::new(0));
    let (done_tx, done_rx) = mpsc::sync_channel::<()>(1);
    b.iter(|| {
        remaining.store(NUM_PINGS, Ordering::Relaxed);
        let remaining = remaining.clone();
        let done_tx = done_tx.clone();
        rt.block_on(async {
            drop(R::spawn(async move {
                for _ in 0..NUM_PINGS {
                    let remaining = remaining.clone();
                    let done_tx = done_tx.clone();
                    drop(R::spawn(async move {
                        let (ping_tx, ping_rx) = tokio::sync::oneshot::channel::<()>();
                        let (pong_tx, pong_rx) = tokio::sync::oneshot::channel::<()>();
                        drop(R::spawn(async move {
                            ping_rx.await.expect("ping lost");
                            pong_tx.send(()).expect("pinger gone");
                        }));
                        ping_tx.send(()).expect("ponger gone");
                        pong_rx.await.expect("pong lost");
                        if remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                            done_tx.send(()).expect("bench thread gone");
                        }
                    }));
                }
            }));
            done_rx.recv().expect("ping-pong tasks gone");
        });
    });
}

/// Spawns the next link of a chain of `left` tasks; the last one signals.
fn chain_link<R: Rt>(done_tx: mpsc::SyncSender<()>, left: usize) {
    if left == 0 {
        done_tx.send(()).expect("bench thread gone");
    } else {
        drop(R::spawn(async move { chain_link::<R>(done_tx, left - 1) }));
    }
}

/// A chain of [`CHAIN_LEN`] tasks, each spawning the next, started inside
/// `block_on`; the bench thread waits for the last.
fn chained_spawn<R: Rt>(b: &mut Bencher<'_>, rt: &R, _workers: usize) {
    let (done_tx, done_rx) = mpsc::sync_channel::<()>(1);
    b.iter(|| {
        let done_tx = done_tx.clone();
        rt.block_on(async move { chain_link::<R>(done_tx, CHAIN_LEN) });
        done_rx.recv().expect("chain broken");
    });
}

/// Every workload, each as one group.
fn benches(c: &mut Criterion) {
    compare(c, "spawn_many_local", spawn_many_local, spawn_many_local);
    compare(
        c,
        "spawn_many_remote_idle",
        spawn_many_remote_idle,
        spawn_many_remote_idle,
    );
    compare(
        c,
        "spawn_many_remote_busy1",
        spawn_many_remote_busy1,
        spawn_many_remote_busy1,
    );
    compare(
        c,
        "spawn_many_remote_busy2",
        spawn_many_remote_busy2,
        spawn_many_remote_busy2,
    );
    compare(c, "yield_many", yield_many, yield_many);
    compare(c, "ping_pong", ping_pong, ping_pong);
    compare(c, "chained_spawn", chained_spawn, chained_spawn);
}

// `criterion_group!` would generate an undocumented `pub fn`; this is what
// it and `criterion_main!` expand to, minus that.
fn main() {
    // Defaults that keep the whole run to a couple of minutes on 2 cores;
    // command-line options (`--measurement-time`, `--sample-size`, ...)
    // override them. Set here, not on the groups, so that they can.
    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    benches(&mut criterion);
    criterion.final_summary();
}
