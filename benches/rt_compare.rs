//! brigade against tokio's multi-thread scheduler on the workloads of tokio's
//! own scheduler benchmarks (spawning, yielding, ping-pong, chained spawns).
//!
//! Each workload is one criterion group holding two benchmarks, `brigade` and
//! `tokio`, run on runtimes with the same number of worker threads, so the
//! report puts e.g. `spawn_many_local/brigade` next to
//! `spawn_many_local/tokio`. Each workload is written once, against the small
//! [`Rt`] trait (the comparison harness, `brigade_examples::harness`, shared
//! with the other benches), in `brigade_examples::workloads`
//! ([`SuiteWorkload`], which says what each does; `benches/scaling.rs` runs
//! them too), and instantiated for both runtimes.
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

use std::time::Duration;

use brigade_examples::harness::{
    Brigade, Rt, Tokio, bench_workers, end_quietly_on_closed_pipe, exit_on_help,
};
use brigade_examples::workloads::SuiteWorkload;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, measurement::WallTime};

/// Worker threads when `BENCH_WORKERS` is not set.
const DEFAULT_WORKERS: usize = 4;

/// One criterion group per workload: the same workload on brigade, then on
/// tokio. Each runtime is built when its benchmark first runs (never for
/// `--list`, nor when a filter leaves the benchmark out) and dropped after
/// it, so the two never compete for the CPU.
fn compare(c: &mut Criterion, workload: SuiteWorkload, workers: usize) {
    let mut group = c.benchmark_group(workload.name());
    // Iterations take milliseconds: equal-sized samples keep the run short.
    group.sampling_mode(SamplingMode::Flat);
    run_on::<Brigade>(&mut group, workload, workers);
    run_on::<Tokio>(&mut group, workload, workers);
    group.finish();
}

/// Benchmark `brigade` or `tokio` in `group`: `workload`, at the size of
/// tokio's suite, on a fresh runtime of type `R`. Each sample sets the
/// workload up, times its iterations and tears it down.
fn run_on<R: Rt>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    workload: SuiteWorkload,
    workers: usize,
) {
    let mut rt: Option<R> = None;
    let count = workload.suite_count();
    group.bench_function(R::KIND.name(), |b| {
        let rt = rt.get_or_insert_with(|| R::build(workers));
        workload.run(rt, workers, count, |iteration| b.iter(iteration))
    });
    drop(rt);
}

// `criterion_group!` would generate an undocumented `pub fn`; this is what
// it and `criterion_main!` expand to, minus that.
fn main() {
    end_quietly_on_closed_pipe();
    exit_on_help("rt_compare", "BENCH_WORKERS=N (default 4)");
    // Defaults that keep the whole run to a couple of minutes on 2 cores;
    // command-line options (`--measurement-time`, `--sample-size`, ...)
    // override them. Set here, not on the groups, so that they can.
    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let workers = bench_workers(DEFAULT_WORKERS);
    for workload in SuiteWorkload::ALL {
        compare(&mut criterion, workload, workers);
    }
    criterion.final_summary();
}
