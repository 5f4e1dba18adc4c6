//! How cooperative yield points share the workers between CPU-bound tasks and
//! tasks that sleep in short steps: brigade with `yield_if_busy` and with
//! `yield_now` against tokio with `yield_now`.
//!
//! The workload is a port of the go-coopsched experiment:
//! - a *CPU task* does 100 ops; one op is 50 passes of `crc32fast::hash` over
//!   a zeroed 256 KiB buffer, with a yield point after each pass;
//! - a *sleep task* sleeps 1 ms 100 times and records how long that took; its
//!   *wait-overhead* is that time minus the 100 ms it asked for.
//!
//! With `workers` worker threads (`BENCH_WORKERS`, else
//! [`std::thread::available_parallelism`]) and
//! `tasks = 10 × max(workers − 1, 1)`, a *batch* spawns tasks and waits for
//! all of them:
//! - `run`: `tasks` CPU tasks;
//! - `wait`: `tasks` sleep tasks;
//! - `mixed`: `tasks` of each, spawned interleaved.
//!
//! Each batch kind is one criterion group (`coopsched_run`,
//! `coopsched_wait`, `coopsched_mixed`) holding one benchmark per
//! configuration, timing one batch per iteration:
//! - `brigade_yield_if_busy`: brigade, yield point `brigade::yield_if_busy()`;
//! - `brigade_yield_now`: brigade, yield point `brigade::yield_now()`;
//! - `tokio_yield_now`: tokio's multi-thread runtime, yield point
//!   `tokio::task::yield_now()`.
//!
//! Both runtimes get the same number of workers. Each runtime is built
//! before its benchmark and dropped after it, so no two compete for the CPU.
//!
//! After criterion, the bench runs [`REPORT_BATCHES`] more `wait` and `mixed`
//! batches per configuration and prints the sleep tasks' wait-overhead: per
//! batch, summed over its sleep tasks, per task and per sleep. Both runtimes'
//! timers have millisecond resolution and round deadlines up, so much of a
//! 1 ms sleep's overhead is that rounding, even on idle workers: compare the
//! configurations with each other, and `mixed` with `wait`, not with zero.
//! For the same reason a `mixed` batch usually lasts as long as its sleep
//! tasks, so its time says more about timers than about CPU throughput.
//!
//! Run with:
//!
//! ```text
//! cargo bench -p brigade-benches --bench coopsched
//! BENCH_WORKERS=4 cargo bench -p brigade-benches --bench coopsched -- coopsched_mixed
//! ```

use std::future::Future;
use std::hint::black_box;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, Criterion, SamplingMode, measurement::WallTime};

use brigade_examples::harness::{
    Brigade, Rt, Tokio, available_cores, bench_workers, end_quietly_on_closed_pipe, exit_on_help,
};

/// Size of the buffer the CPU tasks checksum.
const BUFFER_LEN: usize = 256 * 1024;
/// Ops per CPU task.
const CPU_OPS: usize = 100;
/// `crc32fast::hash` passes per op; each is followed by a yield point.
const PASSES_PER_OP: usize = 50;
/// Sleeps per sleep task.
const SLEEPS: u32 = 100;
/// Duration of each sleep.
const SLEEP: Duration = Duration::from_millis(1);
/// Extra batches per configuration and batch kind for the wait-overhead
/// report.
const REPORT_BATCHES: usize = 3;

/// The zeroed buffer every CPU task checksums, allocated once.
static BUFFER: LazyLock<Box<[u8]>> = LazyLock::new(|| vec![0; BUFFER_LEN].into_boxed_slice());

/// What a CPU task returns: the wrapping sum of its checksums.
fn expected_cpu_result() -> u32 {
    let passes = u32::try_from(CPU_OPS * PASSES_PER_OP).expect("pass count fits in u32");
    crc32fast::hash(&BUFFER).wrapping_mul(passes)
}

/// A benchmarked configuration: a runtime and the yield point its CPU tasks
/// call.
trait Config: 'static {
    /// Benchmark id within each group.
    const NAME: &'static str;
    /// The runtime.
    type Rt: Rt;
    /// The yield point the CPU tasks call after each pass.
    fn yield_point() -> impl Future<Output = ()> + Send;
}

/// brigade, yield point `brigade::yield_if_busy()`.
struct BrigadeYieldIfBusy;

impl Config for BrigadeYieldIfBusy {
    const NAME: &'static str = "brigade_yield_if_busy";
    type Rt = Brigade;

    fn yield_point() -> impl Future<Output = ()> + Send {
        brigade::yield_if_busy()
    }
}

/// brigade, yield point `brigade::yield_now()`.
struct BrigadeYieldNow;

impl Config for BrigadeYieldNow {
    const NAME: &'static str = "brigade_yield_now";
    type Rt = Brigade;

    fn yield_point() -> impl Future<Output = ()> + Send {
        Brigade::yield_now()
    }
}

/// tokio's multi-thread runtime, yield point `tokio::task::yield_now()`.
struct TokioYieldNow;

impl Config for TokioYieldNow {
    const NAME: &'static str = "tokio_yield_now";
    type Rt = Tokio;

    fn yield_point() -> impl Future<Output = ()> + Send {
        Tokio::yield_now()
    }
}

/// Worker threads for both runtimes: `BENCH_WORKERS`, else the available
/// parallelism.
fn workers() -> usize {
    bench_workers(available_cores())
}

/// Tasks of each kind per batch: 10 × max(workers − 1, 1).
fn num_tasks(workers: usize) -> usize {
    10 * workers.saturating_sub(1).max(1)
}

/// The tasks a batch spawns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Batch {
    /// CPU tasks only.
    Run,
    /// Sleep tasks only.
    Wait,
    /// CPU and sleep tasks, interleaved.
    Mixed,
}

impl Batch {
    const ALL: [Batch; 3] = [Batch::Run, Batch::Wait, Batch::Mixed];

    fn name(self) -> &'static str {
        match self {
            Batch::Run => "run",
            Batch::Wait => "wait",
            Batch::Mixed => "mixed",
        }
    }

    fn cpu(self) -> bool {
        self != Batch::Wait
    }

    fn sleep(self) -> bool {
        self != Batch::Run
    }
}

/// 100 ops of 50 checksum passes, a yield point after each pass.
async fn cpu_task<C: Config>() -> u32 {
    let buffer: &[u8] = &BUFFER;
    let mut sum = 0u32;
    for _ in 0..CPU_OPS {
        for _ in 0..PASSES_PER_OP {
            sum = sum.wrapping_add(crc32fast::hash(black_box(buffer)));
            C::yield_point().await;
        }
    }
    sum
}

/// 100 sleeps of 1 ms; returns how long they took in all.
async fn sleep_task<R: Rt>() -> Duration {
    let start = Instant::now();
    for _ in 0..SLEEPS {
        R::sleep(SLEEP).await;
    }
    start.elapsed()
}

/// Spawns one batch of `tasks` tasks of each kind the batch holds, awaits
/// them all and returns the sleep tasks' elapsed times. Panics if a CPU task
/// computed the wrong checksum.
fn run_batch<C: Config>(rt: &C::Rt, batch: Batch, tasks: usize, expected: u32) -> Vec<Duration> {
    rt.block_on(async {
        let mut cpu = Vec::with_capacity(tasks);
        let mut sleep = Vec::with_capacity(tasks);
        for _ in 0..tasks {
            if batch.cpu() {
                cpu.push(C::Rt::spawn(cpu_task::<C>()));
            }
            if batch.sleep() {
                sleep.push(C::Rt::spawn(sleep_task::<C::Rt>()));
            }
        }
        for handle in cpu {
            let sum = handle.await.expect("CPU task failed");
            assert_eq!(sum, expected, "CPU task computed a wrong checksum");
        }
        let mut elapsed = Vec::with_capacity(sleep.len());
        for handle in sleep {
            elapsed.push(handle.await.expect("sleep task failed"));
        }
        elapsed
    })
}

/// One benchmark: `batch` on a fresh runtime of configuration `C`.
fn bench_config<C: Config>(group: &mut BenchmarkGroup<'_, WallTime>, batch: Batch, workers: usize) {
    let tasks = num_tasks(workers);
    let expected = expected_cpu_result();
    // Built when the benchmark first runs: never for `--list`, nor when a
    // filter leaves it out.
    let mut rt: Option<C::Rt> = None;
    group.bench_function(C::NAME, |b| {
        let rt = rt.get_or_insert_with(|| C::Rt::build(workers));
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                black_box(run_batch::<C>(rt, batch, tasks, expected));
                total += start.elapsed();
            }
            total
        });
    });
    drop(rt);
}

fn benches(c: &mut Criterion) {
    let workers = workers();
    for batch in Batch::ALL {
        let mut group = c.benchmark_group(format!("coopsched_{}", batch.name()));
        // Batches take 0.1–1 s: equal-sized samples of one or a few batches
        // keep each benchmark near the measurement time.
        group.sampling_mode(SamplingMode::Flat);
        bench_config::<BrigadeYieldIfBusy>(&mut group, batch, workers);
        bench_config::<BrigadeYieldNow>(&mut group, batch, workers);
        bench_config::<TokioYieldNow>(&mut group, batch, workers);
        group.finish();
    }
}

/// Wait-overhead of the sleep tasks of [`REPORT_BATCHES`] batches of one
/// kind, on one configuration.
struct OverheadRow {
    config: &'static str,
    batch: Batch,
    /// Sleep tasks measured, over all batches.
    sleep_tasks: usize,
    /// Mean wall time of a batch.
    batch_time: Duration,
    /// Overhead summed over each batch's sleep tasks, averaged over batches.
    total_per_batch_us: f64,
    /// Mean overhead per sleep task.
    mean_per_task_us: f64,
    /// Mean overhead per 1 ms sleep.
    mean_per_sleep_us: f64,
    /// Largest overhead of any one sleep task.
    max_per_task_us: f64,
}

/// A sleep task's wait-overhead in µs (negative only if a sleep ended early).
fn overhead_us(elapsed: Duration) -> f64 {
    let wanted = SLEEP * SLEEPS;
    elapsed.as_secs_f64() * 1e6 - wanted.as_secs_f64() * 1e6
}

/// Runs the report's `wait` and `mixed` batches on a fresh runtime of
/// configuration `C`.
fn measure_overhead<C: Config>(workers: usize, rows: &mut Vec<OverheadRow>) {
    let tasks = num_tasks(workers);
    let expected = expected_cpu_result();
    let rt = C::Rt::build(workers);
    for batch in [Batch::Wait, Batch::Mixed] {
        let mut overheads = Vec::with_capacity(REPORT_BATCHES * tasks);
        let mut batch_time = Duration::ZERO;
        for _ in 0..REPORT_BATCHES {
            let start = Instant::now();
            let elapsed = run_batch::<C>(&rt, batch, tasks, expected);
            batch_time += start.elapsed();
            overheads.extend(elapsed.into_iter().map(overhead_us));
        }
        let sum: f64 = overheads.iter().sum();
        rows.push(OverheadRow {
            config: C::NAME,
            batch,
            sleep_tasks: overheads.len(),
            batch_time: batch_time / REPORT_BATCHES as u32,
            total_per_batch_us: sum / REPORT_BATCHES as f64,
            mean_per_task_us: sum / overheads.len() as f64,
            mean_per_sleep_us: sum / overheads.len() as f64 / f64::from(SLEEPS),
            max_per_task_us: overheads.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        });
    }
    drop(rt);
}

/// Prints the wait-overhead table.
fn report_overhead() {
    let workers = workers();
    let tasks = num_tasks(workers);
    let mut rows = Vec::new();
    measure_overhead::<BrigadeYieldIfBusy>(workers, &mut rows);
    measure_overhead::<BrigadeYieldNow>(workers, &mut rows);
    measure_overhead::<TokioYieldNow>(workers, &mut rows);

    println!();
    println!(
        "Sleep tasks' wait-overhead (elapsed - {} ms per task), {workers} workers, \
         {tasks} tasks of each kind per batch, {REPORT_BATCHES} batches each \
         (tasks: sleep tasks measured in all):",
        (SLEEP * SLEEPS).as_millis()
    );
    println!(
        "{:<22} {:<6} {:>6} {:>11} {:>16} {:>15} {:>16} {:>14}",
        "config",
        "batch",
        "tasks",
        "batch (ms)",
        "sum/batch (µs)",
        "mean/task (µs)",
        "mean/sleep (µs)",
        "max/task (µs)"
    );
    for row in &rows {
        println!(
            "{:<22} {:<6} {:>6} {:>11.1} {:>16.0} {:>15.0} {:>16.0} {:>14.0}",
            row.config,
            row.batch.name(),
            row.sleep_tasks,
            row.batch_time.as_secs_f64() * 1e3,
            row.total_per_batch_us,
            row.mean_per_task_us,
            row.mean_per_sleep_us,
            row.max_per_task_us
        );
    }
}

// `criterion_group!` would generate an undocumented `pub fn`; this is what
// it and `criterion_main!` expand to, minus that.
fn main() {
    end_quietly_on_closed_pipe();
    exit_on_help("coopsched", "BENCH_WORKERS=N (default: the available CPUs)");
    // Defaults that keep the whole run to 2–3 minutes on 2 cores;
    // command-line options (`--measurement-time`, `--sample-size`, ...)
    // override them. Set here, not on the groups, so that they can.
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    benches(&mut criterion);
    criterion.final_summary();
    // `--list` only names the benchmarks; run nothing then.
    if !std::env::args().any(|arg| arg == "--list") {
        report_overhead();
    }
}
