//! One workload of tokio's scheduler benchmarks (`benches/rt_compare.rs`)
//! on one runtime, a fixed number of iterations, with no benchmark
//! framework around it: the program to run under `perf stat`, `perf record`
//! or `valgrind --tool=callgrind` when comparing the two runtimes, since its
//! work is the same from run to run (instruction counts can be compared).
//!
//! ```text
//! cargo build --release -p brigade-examples --example suite_once
//! valgrind --tool=callgrind target/release/examples/suite_once yield_many brigade 2 20
//! perf stat target/release/examples/suite_once ping_pong tokio 2 2000
//! ```
//!
//! Arguments: workload (`spawn_many_local`, `yield_many`, `ping_pong`, ...:
//! the criterion group names), runtime (`brigade` or `tokio`), workers,
//! iterations. Prints the mean and median time of an iteration.

use std::time::{Duration, Instant};

use brigade_examples::harness::{Brigade, Rt, RuntimeKind, Tokio};
use brigade_examples::workloads::SuiteWorkload;

const USAGE: &str = "usage: suite_once WORKLOAD brigade|tokio WORKERS ITERATIONS";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = parse(&args);
    let (workload, kind, workers, iterations) = match parsed {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("{message}\n{USAGE}");
            std::process::exit(2);
        }
    };
    let times = match kind {
        RuntimeKind::Brigade => run::<Brigade>(workload, workers, iterations),
        RuntimeKind::Tokio => run::<Tokio>(workload, workers, iterations),
    };
    report(workload, kind, workers, times);
}

fn parse(args: &[String]) -> Result<(SuiteWorkload, RuntimeKind, usize, usize), String> {
    let [workload, runtime, workers, iterations] = args else {
        return Err(format!("expected 4 arguments, got {}", args.len()));
    };
    let workload = SuiteWorkload::ALL
        .into_iter()
        .find(|w| w.name() == workload)
        .ok_or_else(|| format!("unknown workload {workload:?}"))?;
    let kind = RuntimeKind::parse("the runtime", runtime)?;
    let positive = |name: &str, text: &str| match text.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{name} must be a positive integer, got {text:?}")),
    };
    Ok((
        workload,
        kind,
        positive("WORKERS", workers)?,
        positive("ITERATIONS", iterations)?,
    ))
}

/// Runs `iterations` iterations of `workload` at the suite's size, timing
/// each.
fn run<R: Rt>(workload: SuiteWorkload, workers: usize, iterations: usize) -> Vec<Duration> {
    let rt = R::build(workers);
    let mut times = Vec::with_capacity(iterations);
    workload.run(&rt, workers, workload.suite_count(), |iteration| {
        for _ in 0..iterations {
            let start = Instant::now();
            iteration();
            times.push(start.elapsed());
        }
    });
    times
}

fn report(workload: SuiteWorkload, kind: RuntimeKind, workers: usize, mut times: Vec<Duration>) {
    times.sort();
    let mean = times.iter().sum::<Duration>() / times.len() as u32;
    println!(
        "{} on {kind}, {workers} workers, {} iterations: mean {:?}, median {:?}",
        workload.name(),
        times.len(),
        mean,
        times[times.len() / 2]
    );
}
